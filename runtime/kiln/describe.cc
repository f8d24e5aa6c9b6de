#include "kiln/describe.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace {

// ", takes a and b equal to 1", or "".
std::string EqualToOne(const VariantInfo& variant) {
  std::vector<std::string> names;
  for (int i = 0; i < variant.num_params; ++i) {
    if (variant.params[i].equal_to_1) names.push_back(variant.params[i].name);
  }
  if (names.empty()) return "";
  return absl::StrCat(", takes ", absl::StrJoin(names, ", "), " equal to 1");
}

// ", compiled for t[1]=8 and t[2]=None" (constexpr tuple elements), or "".
std::string ConstexprElements(const VariantInfo& variant) {
  std::vector<std::string> elements;
  for (int i = 0; i < variant.num_params; ++i) {
    const ParamInfo& param = variant.params[i];
    if (param.value != nullptr) {
      elements.push_back(absl::StrCat(param.name, "=", param.value));
    }
  }
  if (elements.empty()) return "";
  return absl::StrCat(", compiled for ", absl::StrJoin(elements, ", "));
}

}  // namespace

std::string DescribeKernel(const KernelInfo& kernel) {
  std::string out =
      absl::StrCat("kernel ", kernel.name, ": ", kernel.num_variants,
                   " variant", kernel.num_variants == 1 ? "" : "s", "\n");
  for (int v = 0; v < kernel.num_variants; ++v) {
    const VariantInfo& variant = kernel.variants[v];
    absl::StrAppend(&out, "  variant ", v, ": ", variant.name, "\n");
    absl::StrAppend(&out, "    entry ", variant.entry, ", ",
                    32 * variant.num_warps, " threads per program",
                    variant.num_ctas > 1
                        ? absl::StrCat(", clusters of ", variant.num_ctas)
                        : "",
                    variant.aligned ? ", assumes 16-divisible arguments" : "",
                    EqualToOne(variant), ConstexprElements(variant), "\n");
    for (int i = 0; i < variant.num_images; ++i) {
      const CubinImage& image = variant.images[i];
      absl::StrAppendFormat(&out,
                            "    %-7s %8zu bytes, %3d registers, %d bytes "
                            "spilled, %d bytes shared memory",
                            image.arch, image.size, image.registers,
                            image.spills, image.shared_bytes);
      if (image.global_scratch_bytes > 0) {
        absl::StrAppend(&out, ", ", image.global_scratch_bytes,
                        " bytes global scratch per program");
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace kiln
