//===- Metadata.h - the JSON description of one compiled variant ----------===//
#ifndef KILN_DRIVER_METADATA_H
#define KILN_DRIVER_METADATA_H

#include "compiler/frontend/Signature.h"
#include "compiler/target/Target.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <vector>

namespace kiln {

/// How the launcher must encode a descriptor parameter's tensor map, when
/// the variant reads it (a TMA lowering): the box, outermost first, and the
/// shared-memory swizzle in bytes.
struct TensorMapEncoding {
  std::vector<int64_t> box;
  unsigned swizzle = 0;
};

struct VariantMetadata {
  /// The name the kernel answers to: "add_kernel", "Cls.kernel" for a
  /// class's static method.
  std::string kernel;
  /// The entry point's symbol: the function's own name ("kernel").
  std::string entry;
  std::string arch;
  const frontend::KernelSpec *spec;
  const CubinInfo *cubin;
  unsigned dynamicSharedBytes = 0;
  std::string sourceHash;
  std::string ptxasVersion; // "13.0.88"; part of the `compiler` identity
  /// By parameter name.
  std::map<std::string, TensorMapEncoding> tensorMaps;
  /// For an entry point that takes the hidden global scratch buffer (last):
  /// the bytes of each program's share (0 when this arch encodes no map).
  std::optional<int64_t> globalScratchBytes;
  /// Warps a warp-specialized kernel runs beyond num_warps (its producer);
  /// a launch starts 32 * (num_warps + producerWarps) threads.
  unsigned producerWarps = 0;
  /// The warps the kernel was compiled for where kilnc chose fewer than the
  /// config's num_warps (Pipeline.cpp, warpsForWgmma); 0 otherwise.
  unsigned launchWarps = 0;
};

/// Writes docs/architecture.md §2's JSON, keys in a fixed order.
void writeMetadata(llvm::raw_ostream &os, const VariantMetadata &metadata);

/// Prints what `kilnc compile --resource-usage` reports about the variant
/// whose metadata JSON is `json`: registers, spill stores and loads, static
/// and dynamic shared memory, one line. `origin` names the JSON in errors.
llvm::Error printResourceUsage(llvm::raw_ostream &os, llvm::StringRef json,
                               llvm::StringRef origin);

/// The compiler's identity, recorded in every metadata file:
/// "kilnc 0.1.0 (LLVM 22.1.8, ptxas 13.0.88)". The ptxas version is left out
/// when `ptxasVersion` is empty.
std::string compilerVersion(llvm::StringRef ptxasVersion = "");

} // namespace kiln

#endif // KILN_DRIVER_METADATA_H
