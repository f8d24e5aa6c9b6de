#include "kiln/internal/context.h"

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace internal {

absl::StatusOr<CUcontext> CurrentOrPrimaryContext(const CudaDriver& driver) {
  CUcontext context = nullptr;
  absl::Status status =
      CudaStatus(driver, driver.ctx_get_current(&context), "cuCtxGetCurrent");
  if (!status.ok()) return status;
  if (context != nullptr) return context;

  CUdevice device;
  status = CudaStatus(driver, driver.device_get(&device, 0), "cuDeviceGet(0)");
  if (!status.ok()) return status;
  status =
      CudaStatus(driver, driver.device_primary_ctx_retain(&context, device),
                 "cuDevicePrimaryCtxRetain");
  if (!status.ok()) return status;
  status =
      CudaStatus(driver, driver.ctx_set_current(context), "cuCtxSetCurrent");
  if (!status.ok()) {
    // Not current, so nothing will use it: give the reference back.
    if (driver.device_primary_ctx_release != nullptr) {
      driver.device_primary_ctx_release(device);
    }
    return status;
  }
  return context;
}

absl::StatusOr<DeviceCapability> CurrentDeviceCapability(
    const CudaDriver& driver) {
  DeviceCapability capability;
  CUdevice& device = capability.device;
  absl::Status status =
      CudaStatus(driver, driver.ctx_get_device(&device), "cuCtxGetDevice");
  if (!status.ok()) return status;
  status = CudaStatus(driver,
                      driver.device_get_attribute(
                          &capability.major,
                          CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                      "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  if (!status.ok()) return status;
  status = CudaStatus(driver,
                      driver.device_get_attribute(
                          &capability.minor,
                          CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
                      "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  if (!status.ok()) return status;
  return capability;
}

StreamContextScope::StreamContextScope(const CudaDriver& driver,
                                       CUstream stream)
    : driver_(driver) {
  CUcontext current = nullptr;
  // A failed query is reported by CurrentOrPrimaryContext below.
  const bool queried = driver.ctx_get_current(&current) == CUDA_SUCCESS;
  if (queried && stream != nullptr && driver.stream_get_ctx != nullptr &&
      driver.ctx_push_current != nullptr && driver.ctx_pop_current != nullptr) {
    CUcontext owner = nullptr;
    if (driver.stream_get_ctx(stream, &owner) == CUDA_SUCCESS &&
        owner != nullptr && owner != current) {
      status_ = CudaStatus(driver, driver.ctx_push_current(owner),
                           "cuCtxPushCurrent (the stream's context)");
      if (status_.ok()) {
        context_ = owner;
        pushed_ = true;
      }
      return;
    }
  }
  if (queried && current != nullptr) {
    context_ = current;
    return;
  }
  absl::StatusOr<CUcontext> primary = CurrentOrPrimaryContext(driver);
  if (!primary.ok()) {
    status_ = primary.status();
    return;
  }
  context_ = *primary;
}

StreamContextScope::~StreamContextScope() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver_.ctx_pop_current(&popped);
  }
}

}  // namespace internal
}  // namespace kiln
