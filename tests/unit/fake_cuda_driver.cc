#include "fake_cuda_driver.h"

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/mutex_lock.h"

namespace kiln {
namespace testing {
namespace {

FakeGpu *gpu = nullptr;
// The calling thread's stream-capture mode.
thread_local CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

// The names and descriptions the real driver gives the errors tests inject.
struct ErrorText {
  CUresult result;
  const char *name;
  const char *description;
};
constexpr ErrorText kErrors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED",
     "context is destroyed"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
};

void AdvanceClock(unsigned grid_x);

CUresult Init(unsigned) { return gpu->Injected("cuInit"); }
CUresult GetErrorName(CUresult result, const char **name) {
  for (const ErrorText &e : kErrors) {
    if (e.result == result) {
      *name = e.name;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult GetErrorString(CUresult result, const char **text) {
  for (const ErrorText &e : kErrors) {
    if (e.result == result) {
      *text = e.description;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult DeviceGet(CUdevice *device, int ordinal) {
  if (CUresult r = gpu->Injected("cuDeviceGet"))
    return r;
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult DeviceGetAttribute(int *value, CUdevice_attribute attribute,
                            CUdevice device) {
  if (CUresult r = gpu->Injected("cuDeviceGetAttribute"))
    return r;
  auto other = gpu->other_devices.find(device);
  const bool is_other = other != gpu->other_devices.end();
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = is_other ? other->second.cc_major : gpu->cc_major;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = is_other ? other->second.cc_minor : gpu->cc_minor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = gpu->shared_optin_limit;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult PrimaryCtxRetain(CUcontext *context, CUdevice) {
  if (CUresult r = gpu->Injected("cuDevicePrimaryCtxRetain"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  ++gpu->primary_retains;
  *context = gpu->primary;
  return CUDA_SUCCESS;
}
CUresult CtxGetCurrent(CUcontext *context) {
  if (CUresult r = gpu->Injected("cuCtxGetCurrent"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  *context = gpu->current;
  return CUDA_SUCCESS;
}
CUresult CtxSetCurrent(CUcontext context) {
  if (CUresult r = gpu->Injected("cuCtxSetCurrent"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  ++gpu->set_currents;
  gpu->current = context;
  return CUDA_SUCCESS;
}
CUresult StreamGetCtx(CUstream stream, CUcontext *context) {
  if (CUresult r = gpu->Injected("cuStreamGetCtx"))
    return r;
  auto it = gpu->stream_contexts.find(stream);
  *context = it != gpu->stream_contexts.end() ? it->second : gpu->current;
  return CUDA_SUCCESS;
}
CUresult CtxPushCurrent(CUcontext context) {
  if (CUresult r = gpu->Injected("cuCtxPushCurrent"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  gpu->context_stack.push_back(gpu->current);
  gpu->current = context;
  ++gpu->pushes;
  return CUDA_SUCCESS;
}
CUresult CtxPopCurrent(CUcontext *context) {
  if (CUresult r = gpu->Injected("cuCtxPopCurrent"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  if (gpu->context_stack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (context != nullptr)
    *context = gpu->current;
  gpu->current = gpu->context_stack.back();
  gpu->context_stack.pop_back();
  return CUDA_SUCCESS;
}
CUresult CtxGetDevice(CUdevice *device) {
  if (CUresult r = gpu->Injected("cuCtxGetDevice"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  if (gpu->current == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  auto it = gpu->context_devices.find(gpu->current);
  *device = it != gpu->context_devices.end() ? it->second : 0;
  return CUDA_SUCCESS;
}
CUresult CtxGetId(CUcontext context, unsigned long long *id) {
  if (CUresult r = gpu->Injected("cuCtxGetId"))
    return r; // NOLINT
  auto it = gpu->context_ids.find(context);
  *id = it != gpu->context_ids.end() ? it->second
                                     : reinterpret_cast<uintptr_t>(context);
  return CUDA_SUCCESS;
}
CUresult ModuleLoadData(CUmodule *module, const void *image) {
  if (CUresult r = gpu->Injected("cuModuleLoadData"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  if (gpu->load_result != CUDA_SUCCESS)
    return gpu->load_result;
  gpu->loaded_images.push_back(image);
  gpu->load_contexts.push_back(gpu->current);
  *module = reinterpret_cast<CUmodule>(gpu->loaded_images.size());
  gpu->live_modules.insert(*module);
  return CUDA_SUCCESS;
}
CUresult ModuleGetFunction(CUfunction *function, CUmodule module,
                           const char *name) {
  if (CUresult r = gpu->Injected("cuModuleGetFunction"))
    return r;
  if (gpu->expected_entry != name)
    return CUDA_ERROR_NOT_FOUND;
  *function =
      reinterpret_cast<CUfunction>(reinterpret_cast<uintptr_t>(module) * 0x100);
  return CUDA_SUCCESS;
}
CUresult ModuleUnload(CUmodule module) {
  internal::MutexLock lock(&gpu->mu);
  ++gpu->unloads;
  if (gpu->live_modules.erase(module) == 0) {
    ++gpu->bad_unloads;
    return CUDA_ERROR_INVALID_HANDLE;
  }
  return CUDA_SUCCESS;
}
CUresult PrimaryCtxRelease(CUdevice) {
  internal::MutexLock lock(&gpu->mu);
  ++gpu->primary_releases;
  return CUDA_SUCCESS;
}
CUresult FuncSetAttribute(CUfunction, CUfunction_attribute attribute,
                          int value) {
  if (CUresult r = gpu->Injected("cuFuncSetAttribute"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  gpu->function_attributes.emplace_back(attribute, value);
  return CUDA_SUCCESS;
}
// The global scratch pointer a launch passes (FakeGpu::scratch_arg).
CUdeviceptr ScratchOf(void **args) {
  if (gpu->scratch_arg < 0 || args[gpu->scratch_arg] == nullptr)
    return 0;
  return *static_cast<const CUdeviceptr *>(args[gpu->scratch_arg]);
}
CUresult LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                      CUstream stream, void **args, void **) {
  if (CUresult r = gpu->Injected("cuLaunchKernel"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  if (gpu->launch_result != CUDA_SUCCESS)
    return gpu->launch_result;
  gpu->launches.push_back({f,
                           {gx, gy, gz},
                           {bx, by, bz},
                           shared,
                           stream,
                           args,
                           {0, 0, 0},
                           ScratchOf(args)});
  gpu->launch_contexts.push_back(gpu->current);
  AdvanceClock(gx);
  return CUDA_SUCCESS;
}
CUresult LaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **args,
                        void **) {
  if (CUresult r = gpu->Injected("cuLaunchKernelEx"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  if (gpu->launch_result != CUDA_SUCCESS)
    return gpu->launch_result;
  FakeGpu::Launch launch = {
      f,
      {config->gridDimX, config->gridDimY, config->gridDimZ},
      {config->blockDimX, config->blockDimY, config->blockDimZ},
      config->sharedMemBytes,
      config->hStream,
      args,
      {0, 0, 0},
      ScratchOf(args)};
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      launch.cluster[0] = config->attrs[i].value.clusterDim.x;
      launch.cluster[1] = config->attrs[i].value.clusterDim.y;
      launch.cluster[2] = config->attrs[i].value.clusterDim.z;
    }
    if (config->attrs[i].id ==
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      launch.programmatic =
          config->attrs[i].value.programmaticStreamSerializationAllowed != 0;
  }
  gpu->launches.push_back(launch);
  AdvanceClock(config->gridDimX);
  return CUDA_SUCCESS;
}

CUresult DeviceGetName(char *name, int length, CUdevice device) {
  auto other = gpu->other_devices.find(device);
  std::snprintf(name, length, "%s",
                other != gpu->other_devices.end() ? other->second.name.c_str()
                                                  : gpu->device_name.c_str());
  return CUDA_SUCCESS;
}
// Called with gpu->mu held.
void AdvanceClock(unsigned grid_x) {
  gpu->clock_ms += gpu->launch_ms ? gpu->launch_ms(grid_x) : 0.01;
}
CUresult EventCreate(CUevent *event, unsigned) {
  internal::MutexLock lock(&gpu->mu);
  static uintptr_t next = 0x5000;
  *event = reinterpret_cast<CUevent>(next += 16);
  gpu->events[*event] = 0;
  gpu->event_contexts.push_back(gpu->current);
  return CUDA_SUCCESS;
}
CUresult EventDestroy(CUevent event) {
  internal::MutexLock lock(&gpu->mu);
  return gpu->events.erase(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult EventRecord(CUevent event, CUstream) {
  internal::MutexLock lock(&gpu->mu);
  if (!gpu->events.count(event))
    return CUDA_ERROR_INVALID_VALUE;
  gpu->events[event] = gpu->clock_ms;
  return CUDA_SUCCESS;
}
CUresult EventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult EventElapsedTime(float *ms, CUevent start, CUevent stop) {
  internal::MutexLock lock(&gpu->mu);
  *ms = static_cast<float>(gpu->events[stop] - gpu->events[start]);
  return CUDA_SUCCESS;
}
CUresult StreamSynchronize(CUstream) {
  return gpu->Injected("cuStreamSynchronize");
}
CUresult StreamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
  *status = gpu->capture_status;
  return CUDA_SUCCESS;
}
CUresult MemAlloc(CUdeviceptr *pointer, size_t bytes) {
  if (CUresult r = gpu->Injected("cuMemAlloc"))
    return r;
  internal::MutexLock lock(&gpu->mu);
  static CUdeviceptr next = 0x100000;
  *pointer = next += 0x1000;
  ++gpu->live_allocations;
  gpu->alloc_contexts.push_back(gpu->current);
  gpu->allocations.push_back({*pointer, bytes, capture_mode});
  return CUDA_SUCCESS;
}
CUresult MemFree(CUdeviceptr pointer) {
  internal::MutexLock lock(&gpu->mu);
  --gpu->live_allocations;
  gpu->frees.push_back(pointer);
  return CUDA_SUCCESS;
}
CUresult ThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  std::swap(*mode, capture_mode);
  return CUDA_SUCCESS;
}
CUresult MemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream) {
  internal::MutexLock lock(&gpu->mu);
  ++gpu->memsets;
  return CUDA_SUCCESS;
}

} // namespace

FakeGpu::FakeGpu() { gpu = this; }

void FakeGpu::Fail(const std::string &call, CUresult result, int times,
                   int after) {
  internal::MutexLock lock(&mu);
  faults_[call] = {result, times, after};
}

void FakeGpu::Heal() {
  internal::MutexLock lock(&mu);
  faults_.clear();
}

CUresult FakeGpu::Injected(const char *call) {
  internal::MutexLock lock(&mu);
  auto it = faults_.find(call);
  if (it == faults_.end() || it->second.times == 0)
    return CUDA_SUCCESS;
  if (it->second.after > 0) {
    --it->second.after;
    return CUDA_SUCCESS;
  }
  if (it->second.times > 0)
    --it->second.times;
  return it->second.result;
}
FakeGpu::~FakeGpu() {
  if (gpu == this)
    gpu = nullptr;
}

internal::CudaDriver MakeFakeCudaDriver(const FakeGpu &fake) {
  internal::CudaDriver d;
  d.init = Init;
  d.get_error_name = GetErrorName;
  d.get_error_string = GetErrorString;
  d.device_get = DeviceGet;
  d.device_get_attribute = DeviceGetAttribute;
  d.device_primary_ctx_retain = PrimaryCtxRetain;
  d.device_primary_ctx_release = PrimaryCtxRelease;
  d.ctx_get_current = CtxGetCurrent;
  d.ctx_set_current = CtxSetCurrent;
  d.ctx_get_device = CtxGetDevice;
  d.module_load_data = ModuleLoadData;
  d.module_get_function = ModuleGetFunction;
  d.module_unload = ModuleUnload;
  d.func_set_attribute = FuncSetAttribute;
  d.launch_kernel = LaunchKernel;
  d.launch_kernel_ex = LaunchKernelEx;
  d.device_get_name = DeviceGetName;
  d.event_create = EventCreate;
  d.event_destroy = EventDestroy;
  d.event_record = EventRecord;
  d.event_synchronize = EventSynchronize;
  d.event_elapsed_time = EventElapsedTime;
  d.stream_synchronize = StreamSynchronize;
  d.stream_is_capturing = StreamIsCapturing;
  d.mem_alloc = MemAlloc;
  d.mem_free = MemFree;
  d.memset_d8_async = MemsetD8Async;
  if (fake.has_context_ids)
    d.ctx_get_id = CtxGetId;
  if (fake.has_capture_mode_exchange)
    d.thread_exchange_stream_capture_mode = ThreadExchangeStreamCaptureMode;
  if (fake.has_stream_contexts) {
    d.stream_get_ctx = StreamGetCtx;
    d.ctx_push_current = CtxPushCurrent;
    d.ctx_pop_current = CtxPopCurrent;
  }
  return d;
}

} // namespace testing
} // namespace kiln
