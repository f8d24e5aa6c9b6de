//===- Target.h - NVIDIA targets: LLVM IR → PTX → cubin --------------------===//
#ifndef KILN_TARGET_TARGET_H
#define KILN_TARGET_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class Module;
}

namespace kiln {

/// A GPU architecture Kiln compiles for.
struct TargetArch {
  std::string name; // "sm_90a"
  unsigned major = 0, minor = 0;
  bool archSpecific = false; // the `a` suffix

  /// Parses sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_120a; the error
  /// lists the supported names.
  static llvm::Expected<TargetArch> parse(llvm::StringRef name);
};

/// Optimizes `module` at O3 for `arch` and emits PTX. The module's triple and
/// data layout are set here.
llvm::Expected<std::string> emitPTX(llvm::Module &module, const TargetArch &arch);

/// What ptxas reports about a compiled kernel.
struct CubinInfo {
  std::string cubin;
  unsigned registers = 0;
  unsigned spillBytes = 0;    // spill stores + spill loads
  unsigned staticSharedBytes = 0;
  std::string log;
};

/// Runs ptxas (`ptxasPath`, or $CUDA_HOME/bin/ptxas, or
/// /usr/local/cuda/bin/ptxas) on `ptx`.
llvm::Expected<CubinInfo> assembleCubin(llvm::StringRef ptx,
                                        const TargetArch &arch,
                                        llvm::StringRef ptxasPath = "");

} // namespace kiln

#endif // KILN_TARGET_TARGET_H
