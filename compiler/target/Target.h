//===- Target.h - NVIDIA targets: LLVM IR → PTX → cubin
//--------------------===//
#ifndef KILN_TARGET_TARGET_H
#define KILN_TARGET_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace kiln {

/// A GPU architecture Kiln compiles for.
struct TargetArch {
  std::string name; // "sm_90a"
  unsigned major = 0, minor = 0;
  bool archSpecific = false; // the `a` suffix

  /// Parses an arch LLVM's NVPTX backend compiles for, from sm_80 on
  /// (supportedArchs()), in any of its spellings: `sm_90a`, or CMake's
  /// CUDA_ARCHITECTURES form `90a` (also `90a-real`). `name` is then the
  /// normalized `sm_` form. The error lists the supported names.
  static llvm::Expected<TargetArch> parse(llvm::StringRef spelling);
};

/// The archs Kiln compiles for: those of LLVM's NVPTX backend from sm_80 on
/// (sm_80 ... sm_90a, sm_100/a/f, ..., sm_121f), in LLVM's order.
std::vector<std::string> supportedArchs();

/// The real archs `ptxas --help` lists as --gpu-name values (sm_75, sm_80,
/// ..., sm_121f): what this toolkit can assemble.
llvm::Expected<std::vector<std::string>>
ptxasArchs(llvm::StringRef ptxasPath = "");

/// The PTX of a module, and a second version when recomputing values after
/// loops (RematerializeAfterLoops.h) changed something; which one needs
/// fewer registers only ptxas can tell.
struct PTXCandidates {
  std::string plain;
  std::optional<std::string> rematerialized;
  /// For kernels without tensor-core instructions: emits `plain`'s module
  /// with its instructions ordered by the NVPTX backend to keep fewer values
  /// live. ptxas largely keeps a block's order where values are long-lived,
  /// so this can be the difference between one block per SM and four
  /// (compileKernel asks for it where the plain copy leaves room for more
  /// blocks). Empty for tensor-core kernels.
  std::function<llvm::Expected<std::string>()> emitRegisterOrdered;
};

/// PTX longer than this many lines is a large kernel (a fully unrolled
/// bitonic sort of thousands of elements: lmdeploy's top-2048 kernel has
/// 148k lines, and ptxas takes 40 s a run on it). Such a kernel is
/// assembled once: emitPTX makes no alternate copies, and the driver tries
/// no occupancy hints or register caps, each another ptxas run. The largest
/// tuned kernels (attention backward, 6k lines) are far below it.
constexpr size_t kLargeKernelPTXLines = 50000;
bool isLargeKernelPTX(llvm::StringRef ptx);

/// Optimizes `module` at O3 for `arch` and emits PTX. The module's triple and
/// data layout are set here. A module that calls libdevice's __nv_* functions
/// links `libdevicePath` (empty: $CUDA_HOME/nvvm/libdevice/libdevice.10.bc,
/// or under /usr/local/cuda). `module` is left as optimized for `plain`.
llvm::Expected<PTXCandidates> emitPTX(llvm::Module &module,
                                      const TargetArch &arch,
                                      llvm::StringRef libdevicePath = "");

/// What ptxas reports about a compiled kernel.
struct CubinInfo {
  std::string cubin;
  unsigned registers = 0;
  unsigned spillBytes = 0; // spill stores + spill loads
  unsigned staticSharedBytes = 0;
  /// ptxas serialized the kernel's wgmma instructions (C7512: each waits for
  /// the one before), which costs a tensor-core kernel far more than a few
  /// registers or blocks per SM.
  bool serializesWgmma = false;
  std::string log;
};

/// Runs ptxas (`ptxasPath`, or $CUDA_HOME/bin/ptxas, or
/// /usr/local/cuda/bin/ptxas) on `ptx`.
llvm::Expected<CubinInfo> assembleCubin(llvm::StringRef ptx,
                                        const TargetArch &arch,
                                        llvm::StringRef ptxasPath = "");

/// The ptxas that assembleCubin runs for `ptxasPath` (see there).
std::string resolvePtxas(llvm::StringRef ptxasPath);

/// ptxas's version ("13.0.88", from `ptxas --version`), part of the
/// compiler's identity: the same PTX gives other cubins under another ptxas.
llvm::Expected<std::string> ptxasVersion(llvm::StringRef ptxasPath = "");

} // namespace kiln

#endif // KILN_TARGET_TARGET_H
