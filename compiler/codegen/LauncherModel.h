//===- LauncherModel.h - Variants grouped into kernels and overloads ------===//
//
// kiln-codegen receives one (metadata, cubin) pair per compiled (kernel,
// arch, variant). This groups them: per kernel, the variants (one per
// distinct specialization, each with a cubin per arch) and the launcher
// overloads (one per distinct tuple of parameter types). Within an overload
// and config the variants may differ only in their assumptions about the
// arguments (divisible by 16, or equal to 1 and then not passed); the
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

/// One compiled (kernel, arch, variant): its parsed metadata and its cubin
/// bytes, or its PTX text when `isPtx` (embedded only for JIT, opt-in).
struct CompiledVariant {
  /// Where the metadata came from, for error messages.
  std::string origin;
  VariantMetadata metadata;
  std::string cubin;
  bool isPtx = false;
  /// The @triton.autotune key, for variants compiled from its configs
  /// (`kilnc compile --autotune` writes it beside them).
  std::optional<std::vector<std::string>> autotuneKey;
  /// The image's file as given on the command line (for .incbin).
  std::string path;
};

/// One image of a variant: a cubin, or PTX for the driver to JIT.
struct ImageModel {
  std::string arch;
  std::string bytes;
  int64_t registers = 0;
  int64_t spills = 0;
  int64_t sharedBytes = 0;
  /// Bytes of global scratch per program (0 without, or when this arch uses
  /// none; VariantMetadata::globalScratchBytes says whether there is the
  /// parameter).
  int64_t globalScratchBytes = 0;
  bool isPtx = false;
  /// The file the bytes came from (CompiledVariant::path).
  std::string path;
  /// Warps beyond the variant's num_warps that this image runs.
  int64_t producerWarps = 0;
  /// Warps its kernel was compiled for, when fewer than num_warps (0:
  /// num_warps).
  int64_t launchWarps = 0;
};

/// One specialization of a kernel, with its images sorted by arch, cubins
/// before PTX.
struct VariantModel {
  /// The arch-independent fields (those of the first cubin seen).
  VariantMetadata metadata;
  std::vector<ImageModel> images;
  /// "x_ptr=*fp32:16, ..., BLOCK=1024, num_warps=4, num_stages=3".
  std::string displayName;
  /// Index into KernelModel::configs.
  unsigned config = 0;

  /// Whether the variant assumes any argument divisible by 16.
  bool isAligned() const;
  /// How many arguments the variant assumes anything about (divisible by 16,
  /// equal to 1, or a constexpr tuple element's value).
  unsigned assumptionCount() const;
};

/// A kernel's configuration: the constexpr values and launch options that a
/// caller chooses through the generated config type.
struct ConfigModel {
  /// Values of KernelModel::constexprNames, in order, as compiled.
  std::vector<std::string> constexprValues;
  int64_t numWarps = 4;
  int64_t numStages = 3;
  int64_t numCtas = 1;
};

/// The variants of one overload compiled with one config.
struct OverloadConfigModel {
  /// Index into KernelModel::configs.
  unsigned config = 0;
  /// Indices into KernelModel::variants, most assumptions first (on a tie,
  /// most required values first); a variant without assumptions, if any,
  /// comes last.
  std::vector<unsigned> variants;
  /// Indices of the parameters whose value every one of `variants` requires,
  /// the same (ParamMetadata::requiredValue: the specializations' `:1`, a
  /// tuple's constexpr elements): the launcher checks them before choosing.
  std::vector<unsigned> requiredValues;
  /// Whether the last of `variants` assumes nothing beyond `requiredValues`
  /// (it then needs no check).
  bool hasGeneralVariant = false;
};

/// The launcher overload for one tuple of parameter types.
struct OverloadModel {
  /// The configs compiled for these types, in order of first appearance;
  /// the first is these types' default.
  std::vector<OverloadConfigModel> configs;
};

/// A kernel: its variants (ordered by overload, then config, then as in
/// OverloadConfigModel::variants), its overloads (in order of first
/// appearance) and its configs (in order of first appearance; the first is
/// the config type's default).
struct KernelModel {
  /// The name the kernel answers to (kilnc -n, KernelInfo::name, tuning
  /// tables): "add_kernel", or "GELU.forward" for a class's static method.
  std::string name;
  /// What the generated C++ names start with (cppKernelName(name)):
  /// launch_GELU_forward, GELU_forward_config, GELU_forward_info.
  std::string cppName;
  std::vector<VariantModel> variants;
  std::vector<OverloadModel> overloads;
  /// The constexpr parameters, in source order.
  std::vector<std::string> constexprNames;
  std::vector<ConfigModel> configs;
  /// The @triton.autotune key, when the variants came from its configs:
  /// the launchers then choose configs by tuning (kiln/tuning.h).
  std::optional<std::vector<std::string>> autotuneKey;
};

/// The C++ form of kernel name `name`: its dots become underscores
/// ("GELU.forward" -> "GELU_forward"; "add_kernel" stays as it is).
std::string cppKernelName(llvm::StringRef name);

/// Groups `compiled` into kernels, in order of first appearance. An image
/// given twice with the same metadata and bytes is kept once (the build's
/// unit-stride variant is the aligned one when the kernel has no unit-stride
/// parameter). The constexpr elements of tuple parameters become params, the
/// slots the launcher checks (ParamMetadata::constexprValue): they are not
/// config fields, so variants differing only in them are chosen by the
/// arguments, as `:1` ones are. Errors when two different images are given
/// for one variant and arch, when the variants of a kernel disagree on its
/// constexpr parameters or autotune key, when the images of a variant
/// disagree on whether the entry point takes the global scratch parameter,
/// when two variants with the same parameter types and config have
/// different entry points, when two kernels' names have the same C++ form
/// (cppKernelName), and on tuple elements a launcher cannot check (a
/// constexpr float, dtype or string; a tuple of constexprs only).
llvm::Expected<std::vector<KernelModel>>
buildLauncherModel(llvm::ArrayRef<CompiledVariant> compiled);

/// "BLOCK=1024, num_warps=4, num_stages=3" (num_ctas when not 1).
std::string describeConfig(const KernelModel &kernel,
                           const ConfigModel &config);

/// Orders arch names by compute capability, then suffix: sm_80 < sm_90 <
/// sm_90a < sm_100a.
bool archLess(llvm::StringRef a, llvm::StringRef b);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_LAUNCHERMODEL_H
