// Internal: the CUDA driver API, loaded at run time.
//
// The runtime never links libcuda: it opens "libcuda.so.1" with dlopen on
// first use and resolves the entry points it needs, so that binaries built with
// Kiln start on machines without a GPU or driver and get a Status from every
// call instead of failing to load. Only the runtime's .cc files include this
// header (it needs cuda.h).

#ifndef KILN_INTERNAL_CUDA_DRIVER_H_
#define KILN_INTERNAL_CUDA_DRIVER_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace internal {

// The driver API entry points the runtime calls. A plain table of function
// pointers, so that tests can fill one with fakes. The types come from cuda.h,
// whose macros also pick the versioned symbols (cuMemAlloc is cuMemAlloc_v2).
struct CudaDriver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;

  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) device_primary_ctx_retain = nullptr;

  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;

  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;

  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;
  decltype(&::cuMemcpyDtoH) memcpy_dtoh = nullptr;
  decltype(&::cuMemsetD8) memset_d8 = nullptr;

  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;

  // Optional: null when the driver is too old to have them.
  // cuDevicePrimaryCtxRelease_v2 (CUDA 11.0) undoes a retain that could not
  // be used.
  decltype(&::cuDevicePrimaryCtxRelease) device_primary_ctx_release = nullptr;
  // cuCtxGetId (CUDA 12.0) tells contexts apart even when a destroyed
  // context's address is reused.
  decltype(&::cuCtxGetId) ctx_get_id = nullptr;
  // cuLaunchKernelEx (CUDA 11.8) launches thread-block clusters.
  decltype(&::cuLaunchKernelEx) launch_kernel_ex = nullptr;
  // cuThreadExchangeStreamCaptureMode (CUDA 10.1) lets a module load on first
  // use proceed while a stream is being captured into a graph.
  decltype(&::cuThreadExchangeStreamCaptureMode)
      thread_exchange_stream_capture_mode = nullptr;
  // cuTensorMapEncodeTiled (CUDA 12.0) encodes the tensor maps of descriptor
  // arguments, for kernels that read them (TMA).
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
  // cuStreamIsCapturing (CUDA 10.0) lets run-time tuning stay out of a
  // stream capture; cuMemsetD8Async flushes the L2 cache between timed
  // launches (kiln::Benchmark).
  decltype(&::cuStreamIsCapturing) stream_is_capturing = nullptr;
  decltype(&::cuMemsetD8Async) memset_d8_async = nullptr;
  // cuStreamGetCtx (CUDA 9.2) and cuCtxPushCurrent/cuCtxPopCurrent: a launch
  // on a stream of another context than the thread's current one loads and
  // launches in the stream's context.
  decltype(&::cuStreamGetCtx) stream_get_ctx = nullptr;
  decltype(&::cuCtxPushCurrent) ctx_push_current = nullptr;
  decltype(&::cuCtxPopCurrent) ctx_pop_current = nullptr;
};

// The shared library that the process-wide driver is loaded from.
inline constexpr char kCudaDriverLibrary[] = "libcuda.so.1";

// Opens `library` with dlopen and resolves every entry point of CudaDriver.
// Does not initialize the driver. Returns FailedPrecondition, naming the
// library and the cause, when the library cannot be opened or lacks a
// required symbol. The library stays loaded for the life of the process when
// this succeeds.
absl::StatusOr<CudaDriver> LoadCudaDriver(const char* library);

// Initializes the driver table `loaded` with cuInit. Returns a copy that
// lives for the rest of the process, or, allocating nothing, the error naming
// cuInit and the cause (no device, driver and kernel module mismatch, ...).
absl::StatusOr<const CudaDriver*> InitCudaDriver(const CudaDriver& loaded);

// The process-wide driver: loaded from kCudaDriverLibrary and initialized
// with cuInit on the first call, which is thread-safe. Later calls return the
// same result, failures included, at the cost of one atomic load.
const absl::StatusOr<const CudaDriver*>& GetCudaDriver();

// OK when `result` is CUDA_SUCCESS; otherwise an error whose message names
// `call` and the driver's name and description of `result`, e.g.
// "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE (device kernel image is
// invalid)", with a status code that reflects the kind of failure.
absl::Status CudaStatus(const CudaDriver& driver, CUresult result,
                        absl::string_view call);

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_CUDA_DRIVER_H_
