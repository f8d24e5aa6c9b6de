//===- KilnPipeline.h - Kiln's pass pipeline, as one definition -*- C++ -*-===//
//
// The passes between the front end's kiln IR and the LLVM dialect, in order,
// built in one place for kilnc and for kiln-opt:
//
//   kiln-set-target          the module's kiln_gpu.target (TargetInfo)
//   kiln-rewrite-block-pointers
//   kiln-assign-layouts      (num-warps)
//   kiln-pipeline-dots       (num-stages)
//   canonicalize
//   kiln-allocate-shared                       -- the "gpu" stage ends here
//   kiln-to-llvm             (compute capability)
//   reconcile-unrealized-casts, canonicalize, cse
//   kiln-remove-redundant-barriers             -- the "llvm" stage
//
// kiln-opt --kiln-pipeline="arch=sm_90a num-warps=8 num-stages=3
// stop-after=gpu" replays what kilnc does to a kernel's 01-kiln.mlir, so a
// failure can be reduced with MLIR's own tools (--mlir-print-ir-after-all,
// --mlir-pass-pipeline-crash-reproducer, --mlir-timing).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_KILNPIPELINE_H
#define KILN_CONVERSION_KILNPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

struct KilnPipelineOptions {
  std::string arch = "sm_80";
  unsigned numWarps = 4;
  unsigned numStages = 3;
  /// Honour tl.range's flatten (kiln-flatten-loops). kilnc compiles again
  /// without it when the flattened loop's buffers exceed shared memory.
  bool flatten = true;
  /// kiln-pipeline-dots' defer-waits. kilnc compiles again without it when
  /// ptxas serializes the wgmma of a kernel that deferred a wait.
  bool deferDotWaits = true;
  /// kiln-pipeline-dots' invariant-rings. kilnc compiles again without it
  /// and keeps the form that runs more blocks an SM.
  bool invariantRings = true;
  /// kiln-tma-stores' scratch-margin: none at first; kilnc compiles again
  /// with the pass's default where a tile kept under it leaves too little
  /// shared memory.
  int64_t tmaStoreScratchMargin = 0;
  /// kiln-stage-dots' copy-at-loads. kilnc compiles again without it when
  /// a tile copied where it was loaded leaves too little shared memory.
  bool copyAtLoads = true;
  /// kiln-stage-dots' beside-live-buffers. kilnc compiles again without it
  /// when tiles placed among the live buffers leave the scratch of single
  /// ops too little shared memory.
  bool stageBesideLiveBuffers = true;
};

/// Block pointers, layouts, the software pipeline and shared-memory offsets
/// (kiln IR to kiln_gpu IR).
void buildKilnGpuPipeline(mlir::OpPassManager &pm,
                          const KilnPipelineOptions &options);

/// kiln_gpu IR to the LLVM and NVVM dialects.
void buildKilnLLVMPipeline(mlir::OpPassManager &pm,
                           const KilnPipelineOptions &options);

/// Registers `kiln-set-target` and the `kiln-pipeline` pipeline (options
/// arch, num-warps, num-stages, stop-after=gpu|llvm) for kiln-opt.
void registerKilnPipeline();

} // namespace kiln

#endif // KILN_CONVERSION_KILNPIPELINE_H
