//===- VariantMetadata.h - One compiled variant's metadata JSON -----------===//
//
// `kilnc compile --metadata` writes one JSON object per compiled (kernel,
// arch, variant); docs/architecture.md section 2 defines it. This is its C++
// form and parser.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_VARIANTMETADATA_H
#define KILN_CODEGEN_VARIANTMETADATA_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen {

/// A non-constexpr kernel parameter: an argument of the launcher. The
/// compiled entry point takes those that are not `equalToOne`, in order.
struct ParamMetadata {
  std::string name;
  /// Triton type: "*fp32", "i32", "bf16", ...
  std::string type;
  /// 16 when the variant assumes the argument divisible by 16, else 1.
  int64_t divisibility = 1;
  /// The variant was compiled for the (integer) argument equal to 1 (`:1`,
  /// "equal_to_1" in the JSON): the launcher checks it and does not pass it.
  bool equalToOne = false;
  /// A tensor-descriptor parameter ("tensordesc<fp16[128,64]>"): whether
  /// the variant reads the tensor map of the descriptor ABI ("tensor_map" in
  /// the JSON), and then the box it was compiled for (outermost dimension
  /// first, like the block shape) and the swizzle in bytes (0, 32, 64, 128).
  bool readsTensorMap = false;
  std::vector<int64_t> tensorMapBox;
  int64_t tensorMapSwizzle = 0;
  /// An element of tuple parameter `name` ("tuple_index" in the JSON): its
  /// position, outermost first. The elements of one tuple are consecutive
  /// and the launcher takes them as one argument.
  std::vector<int64_t> tupleIndex;
  /// Never set by the parser: a constexpr element of a tuple, which
  /// buildLauncherModel makes a slot of the launcher's tuple argument, and
  /// the value it was compiled with ("8", "True", "None"); its `type` is
  /// then the slot's (an integer type, "i1", or "none"). The launcher checks
  /// the argument against it and does not pass it, as for `equalToOne`.
  std::optional<std::string> constexprValue;

  /// "stride[1]" for an element of tuple `stride`, else the name.
  std::string displayName() const;
  /// Whether the entry point takes the argument (neither `:1` nor constexpr).
  bool passedToEntry() const { return !equalToOne && !constexprValue; }
  /// The value the variant requires of the argument, checked by the
  /// launcher: "1" for `:1`, a constexpr element's value; none for a None
  /// element (its C++ type has one value) and for other parameters.
  std::optional<std::string> requiredValue() const;
};

/// A constexpr parameter (or constexpr element of a tuple parameter, at
/// `tupleIndex`) and the value the variant was compiled with.
struct ConstexprMetadata {
  std::string name;
  std::string value;
  std::vector<int64_t> tupleIndex;

  /// "stride[1]" for an element of tuple `stride`, else the name.
  std::string displayName() const;
};

/// The metadata of one compiled variant for one arch.
struct VariantMetadata {
  /// The name the kernel answers to: "add_kernel", or "GELU.forward" for a
  /// class's static method.
  std::string kernel;
  /// The entry point's symbol in the image.
  std::string entry;
  std::string arch;
  std::string signature;
  int64_t numWarps = 4;
  int64_t numStages = 3;
  int64_t numCtas = 1;
  int64_t sharedBytes = 0;
  int64_t registers = 0;
  int64_t spills = 0;
  /// Present ("global_scratch_bytes" in the JSON) when the entry point takes
  /// the hidden global scratch pointer after all its other parameters: the
  /// bytes of it each program (CTA) uses, 0 for an arch that uses none.
  std::optional<int64_t> globalScratchBytes;
  /// Warps beyond num_warps that a warp-specialized image runs (its
  /// producer; "producer_warps", absent for 0): a launch of this image
  /// starts 32 * (num_warps + producerWarps) threads.
  int64_t producerWarps = 0;
  /// Warps the image's kernel was compiled for, where kilnc chose fewer than
  /// num_warps ("launch_warps", absent: num_warps): wgmma tiles a dot's M by
  /// warpgroups of four warps, 16 rows each. A launch then starts
  /// 32 * (launchWarps + producerWarps) threads; num_warps stays the
  /// config's.
  int64_t launchWarps = 0;
  std::vector<ParamMetadata> params;
  std::vector<ConstexprMetadata> constexprs;
  std::string sourceHash;
  std::string compiler;
};

/// Parses and checks one metadata JSON document; `origin` (e.g. the file
/// name) prefixes error messages. Keys the contract does not define are
/// ignored; missing or mistyped required keys, unknown parameter types,
/// names that are not identifiers, out-of-range numbers and tuple elements
/// that do not make up whole tuples are errors.
llvm::Expected<VariantMetadata> parseVariantMetadata(llvm::StringRef json,
                                                     llvm::StringRef origin);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_VARIANTMETADATA_H
