#include "kiln/internal/cuda_driver.h"

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "fake_cuda_driver.h"
#include "kiln/device.h"
#include "kiln/testing/device_buffer.h"
#include "kiln/testing/event_timer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;

TEST(LoadCudaDriver, MissingLibraryIsAStatus) {
  absl::StatusOr<CudaDriver> driver =
      LoadCudaDriver("libkiln-no-such-cuda-driver.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()),
              AllOf(HasSubstr("libkiln-no-such-cuda-driver.so.1"),
                    HasSubstr("NVIDIA driver")));
}

TEST(LoadCudaDriver, LibraryWithoutTheEntryPointsIsAStatus) {
  // The C library loads fine but is not a CUDA driver.
  absl::StatusOr<CudaDriver> driver = LoadCudaDriver("libc.so.6");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()),
              AllOf(HasSubstr("libc.so.6"), HasSubstr("lacks cuInit")));
}

TEST(CudaStatus, NamesTheCallAndTheError) {
  testing::FakeGpu gpu;
  CudaDriver driver = testing::MakeFakeCudaDriver(gpu);
  EXPECT_TRUE(CudaStatus(driver, CUDA_SUCCESS, "cuInit").ok());
  absl::Status status = CudaStatus(driver, CUDA_ERROR_NO_DEVICE, "cuInit");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      status.message(),
      "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  // Unknown to the driver's name table: the number.
  status = CudaStatus(driver, CUDA_ERROR_LAUNCH_FAILED, "cuLaunchKernel");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "cuLaunchKernel: CUDA error 719");
}

// On a machine without a driver or GPU (CI), every public entry point returns
// the loading error instead of crashing; with one, they work.
TEST(ProcessDriver, PublicCallsReturnAStatusWithoutADriver) {
  const absl::StatusOr<const CudaDriver *> &driver = GetCudaDriver();
  if (driver.ok())
    GTEST_SKIP() << "a CUDA driver is present";
  EXPECT_THAT(std::string(driver.status().message()),
              AnyOf(HasSubstr(kCudaDriverLibrary), HasSubstr("cuInit")));
  EXPECT_EQ(CurrentDevice().status(), driver.status());
  EXPECT_EQ(DeviceBuffer::Allocate(16).status(), driver.status());
  EXPECT_EQ(EventTimer::Create().status(), driver.status());
  EXPECT_EQ(SynchronizeStream(nullptr), driver.status());
}

} // namespace
} // namespace kiln::internal
