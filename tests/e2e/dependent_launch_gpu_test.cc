// Programmatic dependent launch on a real GPU (dependent_kernels.py, built by
// triton_kernel()): a chain of kernels, each reading what the one before it
// wrote after tl.extra.cuda.gdc_wait(), launched inside a
// kiln::ProgrammaticDependentLaunch scope and outside one, with the same
// results. Before sm_90 the scope changes nothing. Labelled `gpu`; skips,
// saying why, without a driver or GPU.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/dependent_kernels.h"
#include "gtest/gtest.h"

namespace {

class DependentLaunchGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
  }

  // x -> x + 1 -> 2x + 2 -> ..., `rounds` times over three buffers; every
  // element ends at the same value, which the host computes alongside.
  static void RunChain(int rounds, bool dependent) {
    const int n = 1 << 22; // long enough for neighbours to overlap
    std::vector<float> host(n, 0.0f);
    kiln::DeviceBuffer a = *kiln::DeviceBuffer::Allocate(n * 4);
    kiln::DeviceBuffer b = *kiln::DeviceBuffer::Allocate(n * 4);
    ASSERT_TRUE(a.CopyFromHost(host.data(), n * 4).ok());
    const kiln::Grid grid(kiln::cdiv(n, 1024));
    float expected = 0.0f;
    {
      std::optional<kiln::ProgrammaticDependentLaunch> pdl;
      if (dependent)
        pdl.emplace();
      ASSERT_EQ(kiln::ProgrammaticDependentLaunch::active(), dependent);
      for (int r = 0; r < rounds; ++r) {
        ASSERT_TRUE(e2e::dependent::launch_plus_one(
                        grid, nullptr, a.data<float>(), b.data<float>(), n)
                        .ok());
        ASSERT_TRUE(e2e::dependent::launch_doubled(
                        grid, nullptr, b.data<float>(), a.data<float>(), n)
                        .ok());
        expected = (expected + 1.0f) * 2.0f;
      }
    }
    EXPECT_FALSE(kiln::ProgrammaticDependentLaunch::active());
    ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());
    ASSERT_TRUE(a.CopyToHost(host.data(), n * 4).ok());
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += host[i] != expected;
    EXPECT_EQ(wrong, 0) << "expected " << expected << ", element 0 is "
                        << host[0];
  }
};

TEST_F(DependentLaunchGpuTest, ChainMatchesWithoutDependentLaunch) {
  RunChain(/*rounds=*/20, /*dependent=*/false);
}

TEST_F(DependentLaunchGpuTest, ChainUnderDependentLaunch) {
  RunChain(/*rounds=*/20, /*dependent=*/true);
}

} // namespace
