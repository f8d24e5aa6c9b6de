// The launch entry points of kiln/internal/launch.h and the launch observer.

#include "kiln/internal/launch.h"

#include <atomic>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/grid.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/global_scratch.h"
#include "kiln/internal/module_cache.h"
#include "kiln/internal/variant_launcher.h"
#include "kiln/kernel_info.h"
#include "kiln/launch_observer.h"

namespace kiln {
namespace internal {
namespace {

// The process-wide module cache, made on first use for the process-wide
// driver. Never destroyed: launches may happen during static destruction.
ModuleCache& GlobalModuleCache(const CudaDriver* driver) {
  static ModuleCache* const cache = new ModuleCache(driver);
  return *cache;
}

// The process-wide global scratch buffers, likewise.
GlobalScratchCache& GlobalScratch(const CudaDriver* driver) {
  static GlobalScratchCache* const scratch = new GlobalScratchCache(driver);
  return *scratch;
}

struct Observer {
  LaunchObserver function;
  void* user_data;
};

// Null when no observer is set. Entries are never freed, so a launch that
// loaded one may call it after it was replaced.
std::atomic<const Observer*> observer{nullptr};

absl::Status Launch(const KernelInfo& kernel, const VariantInfo& variant,
                    Grid grid, CUstream stream, void** args,
                    const CubinImage** image) {
  const absl::StatusOr<const CudaDriver*>& driver = GetCudaDriver();
  if (!driver.ok()) return AnnotateVariant(kernel, variant, driver.status());
  return LaunchVariantWith(**driver, GlobalModuleCache(*driver),
                           GlobalScratch(*driver), kernel, variant, grid,
                           stream, args, image);
}

}  // namespace

absl::Status LaunchVariant(const KernelInfo& kernel, const VariantInfo& variant,
                           Grid grid, CUstream stream, void** args) {
  const Observer* watcher = observer.load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(watcher == nullptr)) {
    return Launch(kernel, variant, grid, stream, args, nullptr);
  }
  const CubinImage* image = nullptr;
  absl::Status status = Launch(kernel, variant, grid, stream, args, &image);
  watcher->function(LaunchEvent{&kernel, &variant, image, grid, stream, status},
                    watcher->user_data);
  return status;
}

absl::Status NoMatchingVariant(const KernelInfo& kernel,
                               const char* requirement) {
  return absl::InvalidArgumentError(absl::StrCat(
      kernel.name, ": no compiled variant accepts these arguments (",
      requirement,
      "); build the general variant too, or pass arguments that "
      "satisfy this one"));
}

absl::Status ArgumentNotOne(const KernelInfo& kernel, const char* argument,
                            const std::string& value) {
  return absl::InvalidArgumentError(
      absl::StrCat(kernel.name, ": argument ", argument, " is ", value,
                   ", but the kernel was compiled for ", argument,
                   " equal to 1 (':1' in its specialization); pass 1, or add a "
                   "specialization without ':1' for it"));
}

absl::Status ArgumentNotCompiledValue(const KernelInfo& kernel,
                                      const char* argument,
                                      const std::string& value,
                                      const char* expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      kernel.name, ": argument ", argument, " is ", value,
      ", but the kernel was compiled for ", argument, " = ", expected,
      " (a constexpr element of its specialization); pass ", expected,
      ", or add a specialization that gives ", argument, " a type"));
}

absl::Status NoMatchingConfig(const KernelInfo& kernel, const char* types,
                              const char* compiled) {
  return absl::InvalidArgumentError(absl::StrCat(
      kernel.name,
      ": no variant was compiled with this config for argument "
      "types (",
      types, "); compiled for them: ", compiled,
      ". Add a specialization with this config, or pass one of those"));
}

absl::Status NoSuchTuningPosition(const KernelInfo& kernel, int overload,
                                  int position) {
  return absl::InvalidArgumentError(
      absl::StrCat(kernel.name, ": overload ", overload,
                   " has no config at position ", position));
}

int ModulesLoaded() {
  const absl::StatusOr<const CudaDriver*>& driver = GetCudaDriver();
  return driver.ok() ? GlobalModuleCache(*driver).modules_loaded() : 0;
}

}  // namespace internal

void SetLaunchObserver(LaunchObserver function, void* user_data) {
  internal::observer.store(function == nullptr
                               ? nullptr
                               : new internal::Observer{function, user_data},
                           std::memory_order_release);
}

}  // namespace kiln
