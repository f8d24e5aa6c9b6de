// A fake CUDA driver for testing the runtime without a GPU: a CudaDriver table
// whose entry points act on one in-memory FakeGpu and record what they were
// asked to do.

#ifndef KILN_TESTS_UNIT_FAKE_CUDA_DRIVER_H_
#define KILN_TESTS_UNIT_FAKE_CUDA_DRIVER_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace testing {

// The state behind the fake driver. Tests set the fields that drive its
// answers and read the ones it records. One at a time: MakeFakeCudaDriver
// binds the table to the most recently constructed FakeGpu.
struct FakeGpu {
  FakeGpu();
  ~FakeGpu();

  // Answers.
  int cc_major = 9;
  int cc_minor = 0;
  int shared_optin_limit = 227 * 1024;
  CUcontext current = nullptr; // per process, not per thread
  CUcontext primary = reinterpret_cast<CUcontext>(0x1000);
  bool has_context_ids = true;
  std::map<CUcontext, unsigned long long> context_ids; // NOLINT(runtime/int)
  CUresult load_result = CUDA_SUCCESS;
  CUresult launch_result = CUDA_SUCCESS;
  std::string expected_entry = "add_kernel";

  // Records.
  absl::Mutex mu;
  int primary_retains = 0;
  int set_currents = 0;
  std::vector<const void *> loaded_images; // cuModuleLoadData's argument
  int unloads = 0;
  std::vector<std::pair<CUfunction_attribute, int>> function_attributes;
  struct Launch {
    CUfunction function;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    CUstream stream;
    void **args;
    unsigned cluster[3]; // {0,0,0} unless cuLaunchKernelEx set one
  };
  std::vector<Launch> launches;
};

// A driver table whose entry points use the current FakeGpu. cuCtxGetId is
// absent when the FakeGpu's has_context_ids is false.
internal::CudaDriver MakeFakeCudaDriver(const FakeGpu &gpu);

} // namespace testing
} // namespace kiln

#endif // KILN_TESTS_UNIT_FAKE_CUDA_DRIVER_H_
