#include "kiln/introspection.h"

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "kiln/device.h"
#include "kiln/internal/image_selection.h"
#include "kiln/internal/launch.h"
#include "kiln/internal/mutex_lock.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace {

struct Registry {
  absl::Mutex mu;
  std::vector<const KernelInfo*> kernels ABSL_GUARDED_BY(mu);
};

// Made on first use, so that registrations from any static initializer work;
// never destroyed.
Registry& GetRegistry() {
  static Registry* const registry = new Registry;
  return *registry;
}

}  // namespace

namespace internal {

KernelRegistration::KernelRegistration(const KernelInfo& kernel) {
  Registry& registry = GetRegistry();
  internal::MutexLock lock(&registry.mu);
  registry.kernels.push_back(&kernel);
}

}  // namespace internal

std::vector<const KernelInfo*> RegisteredKernels() {
  Registry& registry = GetRegistry();
  internal::MutexLock lock(&registry.mu);
  return registry.kernels;
}

absl::StatusOr<const KernelInfo*> FindKernel(absl::string_view name) {
  for (const KernelInfo* kernel : RegisteredKernels()) {
    if (name == kernel->name) return kernel;
  }
  return absl::NotFoundError(
      absl::StrCat("no generated kernel named '", name, "' is linked in"));
}

absl::StatusOr<const CubinImage*> ImageForDevice(const VariantInfo& variant,
                                                 int major, int minor) {
  absl::StatusOr<int> index = internal::SelectImage(
      major, minor,
      absl::MakeConstSpan(variant.images,
                          static_cast<size_t>(variant.num_images)));
  if (!index.ok()) return index.status();
  return &variant.images[*index];
}

absl::StatusOr<const CubinImage*> ImageForCurrentDevice(
    const VariantInfo& variant) {
  absl::StatusOr<DeviceInfo> device = CurrentDevice();
  if (!device.ok()) return device.status();
  return ImageForDevice(variant, device->compute_capability_major,
                        device->compute_capability_minor);
}

}  // namespace kiln
