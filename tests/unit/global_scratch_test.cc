// The global scratch buffers on their own: one per (context, stream), the
// per-thread default stream one per thread, grown without freeing, and
// allocated in relaxed stream-capture mode. (variant_launcher_test checks
// what launches pass.)

#include "kiln/internal/global_scratch.h"

#include <cuda.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fake_cuda_driver.h"
#include "kiln/internal/cuda_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

using ::kiln::testing::FakeGpu;
using ::kiln::testing::MakeFakeCudaDriver;

const CUstream kStream = reinterpret_cast<CUstream>(0x5000);
constexpr uint64_t kContextKey = 7;

class GlobalScratchTest : public ::testing::Test {
protected:
  GlobalScratchTest() : driver_(MakeFakeCudaDriver(gpu_)), scratch_(&driver_) {}

  CUdeviceptr Get(uint64_t context_key, CUstream stream, uint64_t bytes) {
    absl::StatusOr<CUdeviceptr> pointer =
        scratch_.Get(context_key, stream, bytes);
    EXPECT_TRUE(pointer.ok()) << pointer.status();
    return pointer.value_or(0);
  }

  FakeGpu gpu_;
  CudaDriver driver_;
  GlobalScratchCache scratch_;
};

TEST_F(GlobalScratchTest, ContextsAndStreamsHaveTheirOwnBuffers) {
  const CUstream other = reinterpret_cast<CUstream>(0x6000);
  const CUdeviceptr a = Get(kContextKey, kStream, 64);
  const CUdeviceptr b = Get(kContextKey, other, 64);
  const CUdeviceptr c = Get(kContextKey + 1, kStream, 64);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  EXPECT_EQ(Get(kContextKey, kStream, 32), a);
  EXPECT_EQ(scratch_.buffers_allocated(), 3);
  // Each new buffer is zeroed once, in stream order; reuse zeroes nothing.
  EXPECT_EQ(gpu_.memsets, 3);
}

// CU_STREAM_PER_THREAD is a different stream on each thread: their launches
// may overlap.
TEST_F(GlobalScratchTest, ThePerThreadStreamHasABufferPerThread) {
  const CUdeviceptr mine = Get(kContextKey, CU_STREAM_PER_THREAD, 64);
  CUdeviceptr theirs = 0;
  std::thread([&] {
    theirs = Get(kContextKey, CU_STREAM_PER_THREAD, 64);
  }).join();
  EXPECT_NE(mine, theirs);
  EXPECT_EQ(Get(kContextKey, CU_STREAM_PER_THREAD, 64), mine);
  // The legacy default stream is one stream, whatever the thread.
  const CUdeviceptr legacy = Get(kContextKey, CU_STREAM_LEGACY, 64);
  CUdeviceptr again = 0;
  std::thread([&] { again = Get(kContextKey, CU_STREAM_LEGACY, 64); }).join();
  EXPECT_EQ(legacy, again);
}

TEST_F(GlobalScratchTest, AllocatesInRelaxedCaptureModeAndRestoresIt) {
  Get(kContextKey, kStream, 64);
  ASSERT_EQ(gpu_.allocations.size(), 1u);
  EXPECT_EQ(gpu_.allocations[0].capture_mode, CU_STREAM_CAPTURE_MODE_RELAXED);
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  ASSERT_EQ(driver_.thread_exchange_stream_capture_mode(&mode), CUDA_SUCCESS);
  EXPECT_EQ(mode, CU_STREAM_CAPTURE_MODE_GLOBAL); // as it was
}

TEST_F(GlobalScratchTest, WorksWithoutCaptureModeExchange) {
  driver_.thread_exchange_stream_capture_mode = nullptr;
  EXPECT_NE(Get(kContextKey, kStream, 64), 0u);
}

// Growth asks for twice the old size; when that does not fit, the need
// alone may.
TEST_F(GlobalScratchTest, GrowsToTheNeedWhenTheHeadroomDoesNotFit) {
  Get(kContextKey, kStream, 1000);
  gpu_.Fail("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY, /*times=*/1);
  const CUdeviceptr grown = Get(kContextKey, kStream, 1500);
  ASSERT_EQ(gpu_.allocations.size(), 2u);
  EXPECT_EQ(gpu_.allocations[1].bytes, 1500u);
  EXPECT_EQ(grown, gpu_.allocations[1].pointer);
  EXPECT_TRUE(gpu_.frees.empty());
}

TEST_F(GlobalScratchTest, AFailedGrowthKeepsTheOldBuffer) {
  const CUdeviceptr old = Get(kContextKey, kStream, 1000);
  gpu_.Fail("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  absl::StatusOr<CUdeviceptr> grown = scratch_.Get(kContextKey, kStream, 4000);
  EXPECT_EQ(grown.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(grown.status().message(),
            "cuMemAlloc of 4000 bytes for the global scratch buffer: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(Get(kContextKey, kStream, 1000), old);
  EXPECT_EQ(scratch_.buffers_allocated(), 1);
}

TEST_F(GlobalScratchTest, AFailedFirstAllocationLeavesNothingBehind) {
  gpu_.Fail("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_FALSE(scratch_.Get(kContextKey, kStream, 64).ok());
  EXPECT_EQ(scratch_.buffers_allocated(), 0);
  gpu_.Heal();
  EXPECT_NE(Get(kContextKey, kStream, 64), 0u);
  EXPECT_EQ(scratch_.buffers_allocated(), 1);
}

// Many threads launching on one stream share its buffer, which grows to the
// largest need.
TEST_F(GlobalScratchTest, ThreadsShareAStreamsBuffer) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 1; i <= 100; ++i)
        Get(kContextKey, kStream, 64 * (t + 1) * i);
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  absl::StatusOr<CUdeviceptr> last = scratch_.Get(kContextKey, kStream, 1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, gpu_.allocations.back().pointer);
  EXPECT_GE(gpu_.allocations.back().bytes, 64u * 8 * 100);
  EXPECT_TRUE(gpu_.frees.empty());
}

} // namespace
} // namespace kiln::internal
