//===- LauncherModel.h - Variants grouped into kernels and overloads ------===//
//
// kiln-codegen receives one (metadata, cubin) pair per compiled (kernel,
// arch, variant). This groups them: per kernel, the variants (one per
// distinct specialization, each with a cubin per arch) and the launcher
// overloads (one per distinct tuple of parameter types). Within an overload
// the variants may differ only in their divisibility assumptions; the
// generated launcher picks among them at run time, most specialized first.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_LAUNCHERMODEL_H
#define KILN_CODEGEN_LAUNCHERMODEL_H

#include "VariantMetadata.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen {

/// One compiled (kernel, arch, variant): its parsed metadata and cubin bytes.
struct CompiledVariant {
  /// Where the metadata came from, for error messages.
  std::string origin;
  VariantMetadata metadata;
  std::string cubin;
};

/// One cubin of a variant.
struct ImageModel {
  std::string arch;
  std::string cubin;
  int64_t registers = 0;
  int64_t spills = 0;
  int64_t sharedBytes = 0;
};

/// One specialization of a kernel, with its cubins sorted by arch.
struct VariantModel {
  /// The arch-independent fields (those of the first cubin seen).
  VariantMetadata metadata;
  std::vector<ImageModel> images;
  /// "x_ptr=*fp32:16, ..., BLOCK=1024, num_warps=4, num_stages=3".
  std::string displayName;

  /// Whether the variant assumes any argument divisible by 16.
  bool isAligned() const;
};

/// The launcher overload for one tuple of parameter types.
struct OverloadModel {
  /// Indices into KernelModel::variants, most divisibility assumptions
  /// first; a variant without assumptions, if any, comes last.
  std::vector<unsigned> variants;
  /// Whether the last of `variants` assumes nothing (it then needs no check).
  bool hasGeneralVariant = false;
};

/// A kernel: its variants (ordered by overload, then as in
/// OverloadModel::variants) and its overloads (in order of first appearance).
struct KernelModel {
  std::string name;
  std::vector<VariantModel> variants;
  std::vector<OverloadModel> overloads;
};

/// Groups `compiled` into kernels, in order of first appearance. Errors when
/// the same variant is given twice for one arch, or when two variants take
/// the same parameter types but differ in constexpr values, launch options or
/// entry point (one launcher could not choose between them).
llvm::Expected<std::vector<KernelModel>>
buildLauncherModel(llvm::ArrayRef<CompiledVariant> compiled);

/// Orders arch names by compute capability, then suffix: sm_80 < sm_90 <
/// sm_90a < sm_100a.
bool archLess(llvm::StringRef a, llvm::StringRef b);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_LAUNCHERMODEL_H
