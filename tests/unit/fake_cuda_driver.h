// A fake CUDA driver for testing the runtime without a GPU: a CudaDriver table
// whose entry points act on one in-memory FakeGpu and record what they were
// asked to do.

#ifndef KILN_TESTS_UNIT_FAKE_CUDA_DRIVER_H_
#define KILN_TESTS_UNIT_FAKE_CUDA_DRIVER_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace testing {

// The state behind the fake driver. Tests set the fields that drive its
// answers and read the ones it records; fields that the driver writes are
// guarded by `mu` (read them after the threads that call it are joined). One
// at a time: MakeFakeCudaDriver binds the table to the most recently
// constructed FakeGpu.
struct FakeGpu {
  FakeGpu();
  ~FakeGpu();

  // Answers.
  int cc_major = 9;
  int cc_minor = 0;
  int shared_optin_limit = 227 * 1024;
  // Devices other than device 0 (whose answers are the fields above) and
  // the device of each context (0 when unset): cuCtxGetDevice answers for
  // the current context, cuDeviceGetAttribute and cuDeviceGetName for the
  // device asked about.
  struct Device {
    std::string name;
    int cc_major = 0;
    int cc_minor = 0;
  };
  std::map<CUdevice, Device> other_devices;
  std::map<CUcontext, CUdevice> context_devices;
  CUcontext current = nullptr; // per process, not per thread
  CUcontext primary = reinterpret_cast<CUcontext>(0x1000);
  bool has_context_ids = true;
  std::map<CUcontext, unsigned long long> context_ids; // NOLINT(runtime/int)
  // cuStreamGetCtx, cuCtxPushCurrent and cuCtxPopCurrent (absent when
  // false): a stream's context is the one set here, else the current one.
  bool has_stream_contexts = true;
  std::map<CUstream, CUcontext> stream_contexts;
  CUresult load_result = CUDA_SUCCESS;
  CUresult launch_result = CUDA_SUCCESS;
  std::string expected_entry = "add_kernel";
  std::string device_name = "Fake GPU";
  // What cuStreamIsCapturing answers for every stream.
  CUstreamCaptureStatus capture_status = CU_STREAM_CAPTURE_STATUS_NONE;
  // When >= 0, each launch records in Launch::scratch the 64-bit value
  // args[scratch_arg] points to (0 when the slot is null): the global
  // scratch pointer, read while the launch's locals are alive.
  int scratch_arg = -1;
  // cuThreadExchangeStreamCaptureMode (absent when false).
  bool has_capture_mode_exchange = true;
  // Fake GPU time for events: every launch advances a clock by
  // launch_ms(grid x) milliseconds (a fixed 0.01 when unset); an event
  // records the clock. Set before any thread launches.
  float (*launch_ms)(unsigned grid_x) = nullptr;

  // Fault injection: the entry point named `call` ("cuInit",
  // "cuModuleLoadData", "cuLaunchKernel", ... as the driver spells it) works
  // for its next `after` calls, then returns `result` for `times` calls
  // (every call when `times` is negative), then works again. Thread-safe.
  void Fail(const std::string &call, CUresult result, int times = -1,
            int after = 0);
  // Ends every fault Fail set.
  void Heal();
  // Whether `call` fails now (consuming one of its failures), and how.
  CUresult Injected(const char *call);

  // Records.
  absl::Mutex mu;
  int primary_retains = 0;
  int set_currents = 0;
  std::vector<const void *> loaded_images; // cuModuleLoadData's argument
  std::vector<CUcontext> load_contexts;    // current at each load
  std::vector<CUcontext> launch_contexts;  // current at each launch
  std::vector<CUcontext> context_stack;    // pushed by cuCtxPushCurrent
  int pushes = 0;
  int unloads = 0;
  // Modules loaded and not unloaded; unloads of anything else.
  std::set<CUmodule> live_modules;
  int bad_unloads = 0;
  int primary_releases = 0;
  std::vector<std::pair<CUfunction_attribute, int>> function_attributes;
  struct Launch {
    CUfunction function;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    CUstream stream;
    void **args;
    unsigned cluster[3]; // {0,0,0} unless cuLaunchKernelEx set one
    CUdeviceptr scratch; // see scratch_arg
    bool programmatic = false; // programmatic stream serialization allowed
  };
  std::vector<Launch> launches;
  double clock_ms = 0;
  std::map<CUevent, double> events;
  std::vector<CUcontext> event_contexts; // current at each cuEventCreate
  std::vector<CUcontext> alloc_contexts; // current at each cuMemAlloc
  struct Allocation {
    CUdeviceptr pointer;
    size_t bytes;
    // The calling thread's stream-capture mode (per thread, as
    // cuThreadExchangeStreamCaptureMode sets it; global at first).
    CUstreamCaptureMode capture_mode;
  };
  std::vector<Allocation> allocations; // each successful cuMemAlloc
  std::vector<CUdeviceptr> frees;      // each cuMemFree's argument
  int live_allocations = 0;
  int memsets = 0;

private:
  struct Fault {
    CUresult result;
    int times;
    int after;
  };
  std::map<std::string, Fault> faults_;
};

// A driver table whose entry points use the current FakeGpu. cuCtxGetId is
// absent when the FakeGpu's has_context_ids is false.
internal::CudaDriver MakeFakeCudaDriver(const FakeGpu &gpu);

} // namespace testing
} // namespace kiln

#endif // KILN_TESTS_UNIT_FAKE_CUDA_DRIVER_H_
