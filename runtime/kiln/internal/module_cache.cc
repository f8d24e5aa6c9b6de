#include "kiln/internal/module_cache.h"

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/image_data.h"
#include "kiln/internal/image_selection.h"
#include "kiln/internal/mutex_lock.h"
#include "kiln/internal/relaxed_capture_mode.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {
namespace {

// Launches may use 48 KiB of shared memory per block without opting in.
constexpr int kDefaultSharedLimit = 48 * 1024;

}  // namespace

absl::StatusOr<const LoadedFunction*> ModuleCache::Load(
    const VariantInfo& variant, CUcontext context, uint64_t context_key) {
  MutexLock lock(&mu_);
  std::unique_ptr<LoadedFunction>& slot =
      functions_[std::make_pair(&variant, context_key)];
  if (slot == nullptr) {
    absl::StatusOr<std::unique_ptr<LoadedFunction>> loaded =
        LoadLocked(variant, context, context_key);
    if (!loaded.ok()) {
      functions_.erase(std::make_pair(&variant, context_key));
      return loaded.status();
    }
    slot = *std::move(loaded);
  }
  // The entry is immutable and outlives every reader (entries are never
  // erased once loaded), so publishing the pointer is enough.
  variant.cache->last.store(slot.get(), std::memory_order_release);
  return slot.get();
}

absl::StatusOr<std::unique_ptr<LoadedFunction>> ModuleCache::LoadLocked(
    const VariantInfo& variant, CUcontext context, uint64_t context_key) {
  const CudaDriver& d = *driver_;
  RelaxedCaptureMode relaxed(d);
  absl::StatusOr<DeviceCapability> capability = CurrentDeviceCapability(d);
  if (!capability.ok()) return capability.status();

  absl::StatusOr<int> index =
      SelectImage(capability->major, capability->minor,
                  absl::MakeConstSpan(variant.images,
                                      static_cast<size_t>(variant.num_images)));
  if (!index.ok()) return index.status();
  const CubinImage& image = variant.images[*index];

  // cuModuleLoadData takes a cubin, or NUL-terminated PTX that the driver
  // JIT-compiles for this device; a compressed image is inflated first.
  absl::StatusOr<const unsigned char*> data = ImageData(image);
  if (!data.ok()) return data.status();
  CUmodule module;
  absl::Status status =
      CudaStatus(d, d.module_load_data(&module, *data), "cuModuleLoadData");
  if (!status.ok()) {
    return absl::Status(
        status.code(),
        absl::StrCat("loading the ", image.arch,
                     image.format == ImageFormat::kPtx ? " PTX" : " cubin",
                     " (", image.size, " bytes): ", status.message()));
  }
  auto fail = [&](absl::Status error) {
    d.module_unload(module);
    return error;
  };

  CUfunction function;
  status =
      CudaStatus(d, d.module_get_function(&function, module, variant.entry),
                 absl::StrCat("cuModuleGetFunction(", variant.entry, ")"));
  if (!status.ok()) return fail(status);

  if (image.shared_bytes > kDefaultSharedLimit) {
    int limit = 0;
    status = CudaStatus(
        d,
        d.device_get_attribute(
            &limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            capability->device),
        "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
    if (!status.ok()) return fail(status);
    if (image.shared_bytes > limit) {
      return fail(absl::ResourceExhaustedError(
          absl::StrCat("the ", image.arch, " cubin needs ", image.shared_bytes,
                       " bytes of shared memory per block; this device (",
                       ArchName(capability->major, capability->minor),
                       ") allows at most ", limit)));
    }
    status = CudaStatus(
        d,
        d.func_set_attribute(function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             image.shared_bytes),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    if (!status.ok()) return fail(status);
  }
  return std::make_unique<LoadedFunction>(
      LoadedFunction{this, context_key, context, function, &image});
}

int ModuleCache::modules_loaded() const {
  MutexLock lock(&mu_);
  return static_cast<int>(functions_.size());
}

}  // namespace internal
}  // namespace kiln
