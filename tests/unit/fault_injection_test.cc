// Every CUDA driver call the launch path makes can fail. These tests make each
// fail in turn (through the fake driver's fault injection) and check that the
// launch returns a Status naming the kernel, the variant and the cause, that
// nothing is leaked (modules, context references; ASan's leak check covers
// memory in the sanitizer build) and that the module cache works for the next
// call once the fault is gone — also with 16 threads launching at once.

#include <cuda.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fake_cuda_driver.h"
#include "kiln/grid.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/global_scratch.h"
#include "kiln/internal/launch.h"
#include "kiln/internal/module_cache.h"
#include "kiln/internal/variant_launcher.h"
#include "test_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

using ::kiln::testing::FakeGpu;
using ::kiln::testing::MakeFakeCudaDriver;
using ::kiln::testing::TestKernel;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const CUcontext kContextA = reinterpret_cast<CUcontext>(0xa000);
const CUcontext kContextB = reinterpret_cast<CUcontext>(0xb000);
const CUstream kStream = reinterpret_cast<CUstream>(0x5000);
// How TestKernel's variant is named in statuses.
constexpr char kVariant[] =
    "add_kernel [x_ptr=*fp32, n=i32, BLOCK=1024, num_warps=4]: ";

class FaultInjectionTest : public ::testing::Test {
protected:
  FaultInjectionTest() : driver_(MakeFakeCudaDriver(gpu_)), cache_(&driver_) {
    gpu_.current = kContextA;
  }

  absl::Status Launch(const TestKernel &kernel, Grid grid = Grid(1)) {
    return LaunchVariantWith(driver_, cache_, scratch_, kernel.info(),
                             kernel.variant(), grid, kStream, args_);
  }

  // Modules the fake driver holds that the cache does not know of.
  int LeakedModules() {
    return static_cast<int>(gpu_.live_modules.size()) - cache_.modules_loaded();
  }

  // The fault's status, then recovery: with the fault gone, the same launch
  // works and loads the module once.
  void ExpectFaultThenRecovery(const TestKernel &kernel, absl::StatusCode code,
                               const std::string &cause) {
    absl::Status status = Launch(kernel);
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(std::string(status.message()),
                AllOf(StartsWith(kVariant), HasSubstr(cause)));
    EXPECT_EQ(LeakedModules(), 0);
    EXPECT_EQ(gpu_.bad_unloads, 0);

    gpu_.Heal();
    absl::Status healed = Launch(kernel);
    EXPECT_TRUE(healed.ok()) << healed;
    EXPECT_TRUE(Launch(kernel).ok());
    EXPECT_EQ(cache_.modules_loaded(), 1);
    EXPECT_EQ(gpu_.live_modules.size(), 1u);
    EXPECT_EQ(gpu_.launches.size(), 2u);
  }

  FakeGpu gpu_;
  CudaDriver driver_;
  ModuleCache cache_;
  GlobalScratchCache scratch_{&driver_};
  void *args_[2] = {nullptr, nullptr};
};

// The driver library is absent: on a machine without one (CI), a launch
// through the process-wide driver names the kernel and the library.
TEST(ProcessDriverFaults, LaunchWithoutTheDriverLibrary) {
  const absl::StatusOr<const CudaDriver *> &driver = GetCudaDriver();
  if (driver.ok())
    GTEST_SKIP() << "a CUDA driver is present";
  TestKernel kernel({"sm_90a"});
  void *args[2] = {nullptr, nullptr};
  absl::Status status =
      LaunchVariant(kernel.info(), kernel.variant(), Grid(1), nullptr, args);
  EXPECT_EQ(status.code(), driver.status().code());
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith(kVariant),
                    HasSubstr(std::string(driver.status().message()))));
  EXPECT_EQ(ModulesLoaded(), 0);
}

TEST(DriverFaults, MissingLibraryNamesItAndTheCause) {
  absl::StatusOr<CudaDriver> driver =
      LoadCudaDriver("/nonexistent/libkiln-fault-injection-cuda.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(driver.status().message()),
      AllOf(HasSubstr("cannot load the CUDA driver"),
            HasSubstr("/nonexistent/libkiln-fault-injection-cuda.so.1")));
}

// cuInit fails (no device, or the kernel module does not match): a status,
// and the driver table that was to be kept is not allocated.
TEST(DriverFaults, CuInitFailure) {
  FakeGpu gpu;
  gpu.Fail("cuInit", CUDA_ERROR_NO_DEVICE);
  absl::StatusOr<const CudaDriver *> driver =
      InitCudaDriver(MakeFakeCudaDriver(gpu));
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(driver.status().message(),
            "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
            "detected)");
}

TEST_F(FaultInjectionTest, ContextDestroyedBeforeFirstUse) {
  // The current context was destroyed: the driver no longer knows its id
  // and refuses to load into it.
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuCtxGetId", CUDA_ERROR_CONTEXT_IS_DESTROYED);
  gpu_.Fail("cuCtxGetDevice", CUDA_ERROR_CONTEXT_IS_DESTROYED);
  ExpectFaultThenRecovery(kernel, absl::StatusCode::kFailedPrecondition,
                          "cuCtxGetDevice: CUDA_ERROR_CONTEXT_IS_DESTROYED "
                          "(context is destroyed)");
}

TEST_F(FaultInjectionTest, ContextDestroyedAfterLoading) {
  TestKernel kernel({"sm_90a"});
  ASSERT_TRUE(Launch(kernel).ok());
  gpu_.Fail("cuLaunchKernel", CUDA_ERROR_CONTEXT_IS_DESTROYED);
  absl::Status status = Launch(kernel);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(status.message()),
      AllOf(StartsWith(kVariant),
            HasSubstr("cuLaunchKernel: CUDA_ERROR_CONTEXT_IS_DESTROYED")));
  // The application makes a new context current: the variant loads there.
  gpu_.Heal();
  gpu_.current = kContextB;
  EXPECT_TRUE(Launch(kernel).ok());
  EXPECT_EQ(cache_.modules_loaded(), 2);
  EXPECT_EQ(LeakedModules(), 0);
}

TEST_F(FaultInjectionTest, CurrentContextQueryFails) {
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuCtxGetCurrent", CUDA_ERROR_DEINITIALIZED, /*times=*/2);
  absl::Status status = Launch(kernel);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith(kVariant), HasSubstr("cuCtxGetCurrent")));
  EXPECT_EQ(cache_.modules_loaded(), 0);
  EXPECT_TRUE(Launch(kernel).ok());
}

TEST_F(FaultInjectionTest, PrimaryContextCannotBeMadeCurrent) {
  // No current context: the launch retains device 0's primary context, and
  // gives the reference back when it cannot make it current.
  gpu_.current = nullptr;
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT);
  absl::Status status = Launch(kernel);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith(kVariant),
                    HasSubstr("cuCtxSetCurrent: CUDA_ERROR_INVALID_CONTEXT")));
  EXPECT_EQ(gpu_.primary_retains, 1);
  EXPECT_EQ(gpu_.primary_releases, 1);

  gpu_.Heal();
  EXPECT_TRUE(Launch(kernel).ok());
  EXPECT_EQ(gpu_.primary_retains, 2);
  EXPECT_EQ(gpu_.primary_releases, 1); // kept: it is current now
}

TEST_F(FaultInjectionTest, PrimaryContextRetainFails) {
  gpu_.current = nullptr;
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY);
  ExpectFaultThenRecovery(kernel, absl::StatusCode::kResourceExhausted,
                          "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY");
}

TEST_F(FaultInjectionTest, DeviceQueryFails) {
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuDeviceGetAttribute", CUDA_ERROR_NOT_INITIALIZED);
  ExpectFaultThenRecovery(kernel, absl::StatusCode::kFailedPrecondition,
                          "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR): "
                          "CUDA_ERROR_NOT_INITIALIZED");
}

TEST_F(FaultInjectionTest, NoBinaryForGpu) {
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuModuleLoadData", CUDA_ERROR_NO_BINARY_FOR_GPU);
  ExpectFaultThenRecovery(
      kernel, absl::StatusCode::kFailedPrecondition,
      "loading the sm_90a cubin (16 bytes): cuModuleLoadData: "
      "CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for "
      "execution on the device)");
}

TEST_F(FaultInjectionTest, ModuleLoadOutOfMemory) {
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuModuleLoadData", CUDA_ERROR_OUT_OF_MEMORY);
  ExpectFaultThenRecovery(kernel, absl::StatusCode::kResourceExhausted,
                          "cuModuleLoadData: CUDA_ERROR_OUT_OF_MEMORY");
}

TEST_F(FaultInjectionTest, EntryPointMissingUnloadsTheModule) {
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND);
  ExpectFaultThenRecovery(kernel, absl::StatusCode::kInvalidArgument,
                          "cuModuleGetFunction(add_kernel): "
                          "CUDA_ERROR_NOT_FOUND");
  EXPECT_EQ(gpu_.unloads, 1);
}

TEST_F(FaultInjectionTest, LaunchOutOfResourcesKeepsTheModule) {
  TestKernel kernel({"sm_90a"});
  gpu_.Fail("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  absl::Status status = Launch(kernel);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith(kVariant),
                    HasSubstr("cuLaunchKernel: "
                              "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many "
                              "resources requested for launch)")));
  // The module loaded fine and stays cached: the next launch reuses it.
  gpu_.Heal();
  EXPECT_TRUE(Launch(kernel).ok());
  EXPECT_EQ(gpu_.loaded_images.size(), 1u);
  EXPECT_EQ(LeakedModules(), 0);
}

TEST_F(FaultInjectionTest, ClusterLaunchOutOfResources) {
  TestKernel kernel({"sm_90a"}, 4, 0, /*num_ctas=*/2);
  gpu_.Fail("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
  absl::Status status = Launch(kernel);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith("add_kernel ["),
                    HasSubstr("cuLaunchKernelEx: "
                              "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")));
  EXPECT_TRUE(Launch(kernel).ok());
}

TEST_F(FaultInjectionTest, DynamicSharedMemoryAboveTheDeviceLimit) {
  TestKernel kernel({"sm_90a"}, 4, /*shared_bytes=*/240 * 1024);
  absl::Status status = Launch(kernel);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith(kVariant),
                    HasSubstr("the sm_90a cubin needs 245760 bytes of shared "
                              "memory per block; this device (sm_90) allows "
                              "at most 232448")));
  EXPECT_EQ(LeakedModules(), 0);
  EXPECT_EQ(gpu_.live_modules.size(), 0u);
  // A device that allows it (say, a later one) loads it.
  gpu_.shared_optin_limit = 256 * 1024;
  EXPECT_TRUE(Launch(kernel).ok());
}

TEST_F(FaultInjectionTest, DynamicSharedMemoryAttributeRefused) {
  TestKernel kernel({"sm_90a"}, 4, /*shared_bytes=*/100 * 1024);
  gpu_.Fail("cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE);
  ExpectFaultThenRecovery(kernel, absl::StatusCode::kInvalidArgument,
                          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES): "
                          "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(gpu_.unloads, 1);
}

TEST_F(FaultInjectionTest, OptInLimitQueryFails) {
  TestKernel kernel({"sm_90a"}, 4, /*shared_bytes=*/100 * 1024);
  // The compute capability queries work; the third, the opt-in limit, comes
  // after the module is loaded, and fails.
  gpu_.Fail("cuDeviceGetAttribute", CUDA_ERROR_INVALID_VALUE, /*times=*/1,
            /*after=*/2);
  ExpectFaultThenRecovery(
      kernel, absl::StatusCode::kInvalidArgument,
      "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN): "
      "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(gpu_.unloads, 1);
}

// 16 threads launch three variants at once while module loads and launches
// fail intermittently: every failure is a status naming the kernel and its
// cause, each variant ends up loaded exactly once, and no module leaks.
TEST_F(FaultInjectionTest, SixteenThreadsThroughIntermittentFaults) {
  constexpr int kThreads = 16;
  constexpr int kLaunchesPerKernel = 50;
  TestKernel small({"sm_90a"});
  TestKernel large({"sm_90a"}, 8, /*shared_bytes=*/100 * 1024);
  TestKernel clustered({"sm_80", "sm_90a"}, 4, 0, /*num_ctas=*/2);
  const TestKernel *kernels[] = {&small, &large, &clustered};
  gpu_.Fail("cuModuleLoadData", CUDA_ERROR_OUT_OF_MEMORY, 7);
  gpu_.Fail("cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE, 3);
  gpu_.Fail("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 40);
  gpu_.Fail("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 40);

  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<int> successes(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (const TestKernel *kernel : kernels) {
        int done = 0;
        // Faults are finite: every launch gets through within a few tries.
        for (int tries = 0; done < kLaunchesPerKernel && tries < 1000;
             ++tries) {
          absl::Status status = Launch(*kernel);
          if (status.ok()) {
            ++done;
          } else {
            failures[t].push_back(std::string(status.message()));
          }
        }
        successes[t] += done;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();

  int failed = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(successes[t], 3 * kLaunchesPerKernel) << "thread " << t;
    for (const std::string &message : failures[t]) {
      ++failed;
      EXPECT_THAT(
          message,
          AllOf(StartsWith("add_kernel ["),
                AnyOf(HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"),
                      HasSubstr("CUDA_ERROR_INVALID_VALUE"),
                      HasSubstr("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"))));
    }
  }
  // Every injected fault surfaced once as a status.
  EXPECT_EQ(failed, 7 + 3 + 40 + 40);
  EXPECT_EQ(cache_.modules_loaded(), 3);
  EXPECT_EQ(gpu_.live_modules.size(), 3u);
  EXPECT_EQ(gpu_.bad_unloads, 0);
  EXPECT_EQ(gpu_.launches.size(), size_t{kThreads * 3 * kLaunchesPerKernel});
}

} // namespace
} // namespace kiln::internal
