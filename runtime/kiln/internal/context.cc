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

}  // namespace internal
}  // namespace kiln
