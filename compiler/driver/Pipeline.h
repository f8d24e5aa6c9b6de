//===- Pipeline.h - from Triton source to cubin, stage by stage -----------===//
#ifndef KILN_DRIVER_PIPELINE_H
#define KILN_DRIVER_PIPELINE_H

#include <string>
#include <vector>

namespace kiln {

/// Where the pipeline stops: each stage's output can be written.
enum class Stage { Kiln, Gpu, LLVM, PTX, Cubin };

struct CompileOptions {
  std::string sourcePath;
  std::vector<std::string> srcs; // files the kernel's module may import
  std::string kernelName;        // empty: the file's only kernel
  std::string signature;
  std::string arch; // sm_90a, ...
  unsigned numWarps = 4;
  unsigned numStages = 3;
  bool numWarpsGiven = false, numStagesGiven = false;
  bool aligned = false;         // every pointer and integer divisible by 16
  bool alignedPointers = false; // every pointer 16-byte aligned
  bool debug = false;           // keep tl.device_assert and run-time asserts
  bool flatten = true;          // honour tl.range's flatten
  Stage emit = Stage::Cubin;
  std::string outputPath;    // "-" for stdout
  std::string metadataPath;  // optional, with Stage::Cubin
  std::string ptxOutputPath; // optional, with Stage::Cubin: also the PTX
                             // that ptxas assembled (the rules' PTX fallback)
  std::string dumpDir;       // optional: every stage's IR
  std::string ptxasPath;     // optional; else $CUDA_HOME/bin/ptxas
  std::string libdevicePath; // optional; else under $CUDA_HOME/nvvm
  /// Set: a variant that needs more shared memory than the target has is not
  /// an error (Triton's autotuner skips such a config): compileKernel writes
  /// why here and returns kExitDoesNotFit.
  std::string *doesNotFit = nullptr;
};

/// compileKernel's status for a variant skipped under
/// CompileOptions::doesNotFit.
inline constexpr int kExitDoesNotFit = 3;

/// Compiles one (kernel, arch, variant). Diagnostics go to stderr as
/// `file:line:col: error: ...` with the source line and a caret. Returns the
/// process exit status: 0 on success.
int compileKernel(const CompileOptions &options);

/// Registers MLIR's pass-manager, timing and context command-line options
/// (--mlir-print-ir-after-all, --mlir-timing,
/// --mlir-pass-pipeline-crash-reproducer, ...), which every pass manager of
/// compileKernel then applies. Call before parsing the command line.
void registerMLIRCommandLineOptions();

} // namespace kiln

#endif // KILN_DRIVER_PIPELINE_H
