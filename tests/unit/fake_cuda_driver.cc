#include "fake_cuda_driver.h"

#include <cuda.h>

#include <cstdint>

#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace testing {
namespace {

FakeGpu *gpu = nullptr;

CUresult Init(unsigned) { return CUDA_SUCCESS; }
CUresult GetErrorName(CUresult result, const char **name) {
  switch (result) {
  case CUDA_ERROR_INVALID_VALUE:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_IMAGE:
    *name = "CUDA_ERROR_INVALID_IMAGE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *name = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult GetErrorString(CUresult result, const char **text) {
  switch (result) {
  case CUDA_ERROR_INVALID_VALUE:
    *text = "invalid argument";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_IMAGE:
    *text = "device kernel image is invalid";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *text = "no CUDA-capable device is detected";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult DeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult DeviceGetAttribute(int *value, CUdevice_attribute attribute,
                            CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = gpu->cc_major;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = gpu->cc_minor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = gpu->shared_optin_limit;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult PrimaryCtxRetain(CUcontext *context, CUdevice) {
  absl::MutexLock lock(&gpu->mu);
  ++gpu->primary_retains;
  *context = gpu->primary;
  return CUDA_SUCCESS;
}
CUresult CtxGetCurrent(CUcontext *context) {
  *context = gpu->current;
  return CUDA_SUCCESS;
}
CUresult CtxSetCurrent(CUcontext context) {
  absl::MutexLock lock(&gpu->mu);
  ++gpu->set_currents;
  gpu->current = context;
  return CUDA_SUCCESS;
}
CUresult CtxGetDevice(CUdevice *device) {
  if (gpu->current == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult CtxGetId(CUcontext context, unsigned long long *id) { // NOLINT
  auto it = gpu->context_ids.find(context);
  *id = it != gpu->context_ids.end() ? it->second
                                     : reinterpret_cast<uintptr_t>(context);
  return CUDA_SUCCESS;
}
CUresult ModuleLoadData(CUmodule *module, const void *image) {
  absl::MutexLock lock(&gpu->mu);
  if (gpu->load_result != CUDA_SUCCESS)
    return gpu->load_result;
  gpu->loaded_images.push_back(image);
  *module = reinterpret_cast<CUmodule>(gpu->loaded_images.size());
  return CUDA_SUCCESS;
}
CUresult ModuleGetFunction(CUfunction *function, CUmodule module,
                           const char *name) {
  if (gpu->expected_entry != name)
    return CUDA_ERROR_NOT_FOUND;
  *function =
      reinterpret_cast<CUfunction>(reinterpret_cast<uintptr_t>(module) * 0x100);
  return CUDA_SUCCESS;
}
CUresult ModuleUnload(CUmodule) {
  absl::MutexLock lock(&gpu->mu);
  ++gpu->unloads;
  return CUDA_SUCCESS;
}
CUresult FuncSetAttribute(CUfunction, CUfunction_attribute attribute,
                          int value) {
  absl::MutexLock lock(&gpu->mu);
  gpu->function_attributes.emplace_back(attribute, value);
  return CUDA_SUCCESS;
}
CUresult LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                      CUstream stream, void **args, void **) {
  absl::MutexLock lock(&gpu->mu);
  if (gpu->launch_result != CUDA_SUCCESS)
    return gpu->launch_result;
  gpu->launches.push_back(
      {f, {gx, gy, gz}, {bx, by, bz}, shared, stream, args, {0, 0, 0}});
  return CUDA_SUCCESS;
}
CUresult LaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **args,
                        void **) {
  absl::MutexLock lock(&gpu->mu);
  if (gpu->launch_result != CUDA_SUCCESS)
    return gpu->launch_result;
  FakeGpu::Launch launch = {
      f,
      {config->gridDimX, config->gridDimY, config->gridDimZ},
      {config->blockDimX, config->blockDimY, config->blockDimZ},
      config->sharedMemBytes,
      config->hStream,
      args,
      {0, 0, 0}};
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      launch.cluster[0] = config->attrs[i].value.clusterDim.x;
      launch.cluster[1] = config->attrs[i].value.clusterDim.y;
      launch.cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  }
  gpu->launches.push_back(launch);
  return CUDA_SUCCESS;
}

} // namespace

FakeGpu::FakeGpu() { gpu = this; }
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
  d.ctx_get_current = CtxGetCurrent;
  d.ctx_set_current = CtxSetCurrent;
  d.ctx_get_device = CtxGetDevice;
  d.module_load_data = ModuleLoadData;
  d.module_get_function = ModuleGetFunction;
  d.module_unload = ModuleUnload;
  d.func_set_attribute = FuncSetAttribute;
  d.launch_kernel = LaunchKernel;
  d.launch_kernel_ex = LaunchKernelEx;
  if (fake.has_context_ids)
    d.ctx_get_id = CtxGetId;
  return d;
}

} // namespace testing
} // namespace kiln
