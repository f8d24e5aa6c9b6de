#include "kiln/launch.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/grid.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/module_cache.h"
#include "kiln/internal/variant_launcher.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {
namespace {

// The process-wide module cache, made on first use for the process-wide
// driver. Never destroyed: launches may happen during static destruction.
ModuleCache& GlobalModuleCache(const CudaDriver* driver) {
  static ModuleCache* const cache = new ModuleCache(driver);
  return *cache;
}

}  // namespace

absl::Status LaunchVariant(const KernelInfo& kernel, const VariantInfo& variant,
                           Grid grid, CUstream stream, void** args) {
  const absl::StatusOr<const CudaDriver*>& driver = GetCudaDriver();
  if (!driver.ok()) return AnnotateVariant(kernel, variant, driver.status());
  return LaunchVariantWith(**driver, GlobalModuleCache(*driver), kernel,
                           variant, grid, stream, args);
}

absl::Status NoMatchingVariant(const KernelInfo& kernel,
                               const char* requirement) {
  return absl::InvalidArgumentError(absl::StrCat(
      kernel.name, ": no compiled variant accepts these arguments (",
      requirement,
      "); build the general variant too, or pass arguments that "
      "satisfy this one"));
}

}  // namespace internal
}  // namespace kiln
