#include "kiln/device.h"

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {

using internal::CudaDriver;
using internal::CudaStatus;
using internal::GetCudaDriver;

std::string DeviceInfo::arch() const {
  return absl::StrCat("sm_", compute_capability_major,
                      compute_capability_minor);
}

absl::StatusOr<DeviceInfo> CurrentDevice() {
  const absl::StatusOr<const CudaDriver*>& loaded = GetCudaDriver();
  if (!loaded.ok()) return loaded.status();
  const CudaDriver& d = **loaded;
  absl::StatusOr<CUcontext> context = internal::CurrentOrPrimaryContext(d);
  if (!context.ok()) return context.status();

  DeviceInfo info;
  CUdevice device;
  absl::Status status =
      CudaStatus(d, d.ctx_get_device(&device), "cuCtxGetDevice");
  if (!status.ok()) return status;
  info.ordinal = static_cast<int>(device);
  char name[256] = {};
  status = CudaStatus(d, d.device_get_name(name, sizeof(name) - 1, device),
                      "cuDeviceGetName");
  if (!status.ok()) return status;
  info.name = name;
  struct {
    CUdevice_attribute attribute;
    int* value;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
       &info.compute_capability_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
       &info.compute_capability_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessors},
  };
  for (const auto& a : attributes) {
    status = CudaStatus(d, d.device_get_attribute(a.value, a.attribute, device),
                        "cuDeviceGetAttribute");
    if (!status.ok()) return status;
  }
  status = CudaStatus(d, d.driver_get_version(&info.driver_version),
                      "cuDriverGetVersion");
  if (!status.ok()) return status;
  return info;
}

absl::Status SynchronizeStream(CUstream stream) {
  const absl::StatusOr<const CudaDriver*>& loaded = GetCudaDriver();
  if (!loaded.ok()) return loaded.status();
  const CudaDriver& d = **loaded;
  absl::StatusOr<CUcontext> context = internal::CurrentOrPrimaryContext(d);
  if (!context.ok()) return context.status();
  return CudaStatus(d, d.stream_synchronize(stream), "cuStreamSynchronize");
}

}  // namespace kiln
