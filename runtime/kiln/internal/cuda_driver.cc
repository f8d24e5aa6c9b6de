#include "kiln/internal/cuda_driver.h"

#include <cuda.h>
#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace internal {
namespace {

// Resolves `name` in `handle` into `*slot`; returns whether it was found.
template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot) {
  *slot = reinterpret_cast<Fn>(dlsym(handle, name));
  return *slot != nullptr;
}

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NOT_FOUND:
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return absl::StatusCode::kFailedPrecondition;
    case CUDA_ERROR_NOT_SUPPORTED:
      return absl::StatusCode::kUnimplemented;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::StatusOr<CudaDriver> LoadCudaDriver(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    // dlerror's message starts with the library name.
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load the CUDA driver: ", error != nullptr ? error : library,
        " (is the NVIDIA driver installed?)"));
  }
  CudaDriver d;
  const char* missing = nullptr;
  auto need = [&](const char* name, auto* slot) {
    if (!Resolve(handle, name, slot) && missing == nullptr) missing = name;
  };
  need("cuInit", &d.init);
  need("cuDriverGetVersion", &d.driver_get_version);
  need("cuGetErrorName", &d.get_error_name);
  need("cuGetErrorString", &d.get_error_string);
  need("cuDeviceGet", &d.device_get);
  need("cuDeviceGetCount", &d.device_get_count);
  need("cuDeviceGetAttribute", &d.device_get_attribute);
  need("cuDeviceGetName", &d.device_get_name);
  need("cuDevicePrimaryCtxRetain", &d.device_primary_ctx_retain);
  need("cuCtxGetCurrent", &d.ctx_get_current);
  need("cuCtxSetCurrent", &d.ctx_set_current);
  need("cuCtxGetDevice", &d.ctx_get_device);
  need("cuCtxSynchronize", &d.ctx_synchronize);
  need("cuModuleLoadData", &d.module_load_data);
  need("cuModuleGetFunction", &d.module_get_function);
  need("cuModuleUnload", &d.module_unload);
  need("cuFuncGetAttribute", &d.func_get_attribute);
  need("cuFuncSetAttribute", &d.func_set_attribute);
  need("cuLaunchKernel", &d.launch_kernel);
  need("cuMemAlloc_v2", &d.mem_alloc);
  need("cuMemFree_v2", &d.mem_free);
  need("cuMemcpyHtoD_v2", &d.memcpy_htod);
  need("cuMemcpyDtoH_v2", &d.memcpy_dtoh);
  need("cuMemsetD8_v2", &d.memset_d8);
  need("cuEventCreate", &d.event_create);
  need("cuEventDestroy_v2", &d.event_destroy);
  need("cuEventRecord", &d.event_record);
  need("cuEventSynchronize", &d.event_synchronize);
  need("cuStreamSynchronize", &d.stream_synchronize);
  // cuEventElapsedTime_v2 (CUDA 12.8) and the original take the same
  // arguments; older drivers have only the original.
  if (!Resolve(handle, "cuEventElapsedTime_v2", &d.event_elapsed_time)) {
    need("cuEventElapsedTime", &d.event_elapsed_time);
  }
  Resolve(handle, "cuDevicePrimaryCtxRelease_v2",
          &d.device_primary_ctx_release);
  Resolve(handle, "cuCtxGetId", &d.ctx_get_id);
  Resolve(handle, "cuLaunchKernelEx", &d.launch_kernel_ex);
  Resolve(handle, "cuThreadExchangeStreamCaptureMode",
          &d.thread_exchange_stream_capture_mode);
  Resolve(handle, "cuTensorMapEncodeTiled", &d.tensor_map_encode_tiled);
  Resolve(handle, "cuStreamIsCapturing", &d.stream_is_capturing);
  Resolve(handle, "cuStreamGetCtx", &d.stream_get_ctx);
  Resolve(handle, "cuCtxPushCurrent_v2", &d.ctx_push_current);
  Resolve(handle, "cuCtxPopCurrent_v2", &d.ctx_pop_current);
  Resolve(handle, "cuMemsetD8Async", &d.memset_d8_async);
  if (missing != nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver library ", library, " lacks ", missing,
                     " (driver too old, or not the CUDA driver)"));
  }
  return d;
}

absl::StatusOr<const CudaDriver*> InitCudaDriver(const CudaDriver& loaded) {
  absl::Status init = CudaStatus(loaded, loaded.init(0), "cuInit");
  if (!init.ok()) return init;
  // Never freed: launches may run during static destruction.
  return new CudaDriver(loaded);
}

const absl::StatusOr<const CudaDriver*>& GetCudaDriver() {
  static const absl::StatusOr<const CudaDriver*>* const driver =
      []() -> absl::StatusOr<const CudaDriver*>* {
    absl::StatusOr<CudaDriver> loaded = LoadCudaDriver(kCudaDriverLibrary);
    if (!loaded.ok()) {
      return new absl::StatusOr<const CudaDriver*>(loaded.status());
    }
    return new absl::StatusOr<const CudaDriver*>(InitCudaDriver(*loaded));
  }();
  return *driver;
}

absl::Status CudaStatus(const CudaDriver& driver, CUresult result,
                        absl::string_view call) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  if (driver.get_error_name == nullptr ||
      driver.get_error_name(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (driver.get_error_string == nullptr ||
      driver.get_error_string(result, &description) != CUDA_SUCCESS) {
    description = nullptr;
  }
  std::string message = absl::StrCat(
      call, ": ",
      name != nullptr ? name
                      : absl::StrCat("CUDA error ", static_cast<int>(result)));
  if (description != nullptr) absl::StrAppend(&message, " (", description, ")");
  return absl::Status(CodeFor(result), message);
}

}  // namespace internal
}  // namespace kiln
