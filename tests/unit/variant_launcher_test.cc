#include "kiln/internal/variant_launcher.h"

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "fake_cuda_driver.h"
#include "kiln/dependent_launch.h"
#include "kiln/grid.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/global_scratch.h"
#include "kiln/internal/launch.h"
#include "kiln/internal/module_cache.h"
#include "test_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

using ::kiln::testing::FakeGpu;
using ::kiln::testing::MakeFakeCudaDriver;
using ::kiln::testing::TestKernel;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const CUcontext kContext = reinterpret_cast<CUcontext>(0xc000);
const CUstream kStream = reinterpret_cast<CUstream>(0x5000);

class VariantLauncherTest : public ::testing::Test {
protected:
  VariantLauncherTest() : driver_(MakeFakeCudaDriver(gpu_)), cache_(&driver_) {}

  absl::Status Launch(const TestKernel &kernel, Grid grid,
                      CUstream stream = kStream) {
    return LaunchVariantWith(driver_, cache_, scratch_, kernel.info(),
                             kernel.variant(), grid, stream, args_);
  }

  FakeGpu gpu_;
  CudaDriver driver_;
  ModuleCache cache_;
  GlobalScratchCache scratch_{&driver_};
  // Room for TestKernel's two parameters and a global scratch pointer.
  void *args_[3] = {nullptr, nullptr, nullptr};
};

TEST_F(VariantLauncherTest, LaunchesWithTheVariantsGeometry) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"}, /*num_warps=*/8, /*shared_bytes=*/1024);
  ASSERT_TRUE(Launch(kernel, Grid(100, 2, 3)).ok());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  const FakeGpu::Launch &launch = gpu_.launches[0];
  EXPECT_THAT(launch.grid, ElementsAre(100u, 2u, 3u));
  EXPECT_THAT(launch.block, ElementsAre(256u, 1u, 1u));
  EXPECT_EQ(launch.shared_bytes, 1024u);
  EXPECT_EQ(launch.stream, kStream);
  EXPECT_EQ(launch.args, args_);
}

// A warp-specialized image runs its producer warpgroup past num_warps.
TEST_F(VariantLauncherTest, WarpSpecializedImageStartsItsProducerWarps) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"}, /*num_warps=*/8, /*shared_bytes=*/1024);
  kernel.mutable_image(0).producer_warps = 4;
  ASSERT_TRUE(Launch(kernel, Grid(132)).ok());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_THAT(gpu_.launches[0].block, ElementsAre(384u, 1u, 1u));
}

// kilnc compiled the image for fewer warps than the config's num_warps
// (wgmma's warpgroups along M): launches start the image's warps.
TEST_F(VariantLauncherTest, ImageCompiledForFewerWarpsStartsThem) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"}, /*num_warps=*/8, /*shared_bytes=*/1024);
  kernel.mutable_image(0).launch_warps = 4;
  ASSERT_TRUE(Launch(kernel, Grid(132)).ok());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_THAT(gpu_.launches[0].block, ElementsAre(128u, 1u, 1u));
}

TEST_F(VariantLauncherTest, RepeatedLaunchesLoadOnce) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"});
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(Launch(kernel, Grid(1)).ok());
  EXPECT_EQ(gpu_.launches.size(), 10u);
  EXPECT_EQ(gpu_.loaded_images.size(), 1u);
}

TEST_F(VariantLauncherTest, UsesDevice0PrimaryContextWhenNoneIsCurrent) {
  ASSERT_EQ(gpu_.current, nullptr);
  TestKernel kernel({"sm_90a"});
  ASSERT_TRUE(Launch(kernel, Grid(1)).ok());
  EXPECT_EQ(gpu_.primary_retains, 1);
  EXPECT_EQ(gpu_.current, gpu_.primary);
  // Now current: not retained again.
  ASSERT_TRUE(Launch(kernel, Grid(1)).ok());
  EXPECT_EQ(gpu_.primary_retains, 1);
}

TEST_F(VariantLauncherTest, LoadsAndLaunchesInTheStreamsContext) {
  // The thread's current context is kContext; the stream belongs to another.
  const CUcontext other = reinterpret_cast<CUcontext>(0xd000);
  gpu_.current = kContext;
  gpu_.stream_contexts[kStream] = other;
  TestKernel kernel({"sm_90a"});
  ASSERT_TRUE(Launch(kernel, Grid(1)).ok());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_THAT(gpu_.load_contexts, ElementsAre(other));
  EXPECT_THAT(gpu_.launch_contexts, ElementsAre(other));
  // The thread's context is current again, and nothing was retained.
  EXPECT_EQ(gpu_.current, kContext);
  EXPECT_TRUE(gpu_.context_stack.empty());
  EXPECT_EQ(gpu_.primary_retains, 0);
  // A stream of the current context switches nothing; each context loads
  // its own module.
  gpu_.stream_contexts[kStream] = kContext;
  ASSERT_TRUE(Launch(kernel, Grid(1)).ok());
  EXPECT_EQ(gpu_.pushes, 1);
  EXPECT_THAT(gpu_.load_contexts, ElementsAre(other, kContext));
  EXPECT_THAT(gpu_.launch_contexts, ElementsAre(other, kContext));
}

TEST_F(VariantLauncherTest, AStreamsContextServesWhenNoneIsCurrent) {
  const CUcontext other = reinterpret_cast<CUcontext>(0xd000);
  gpu_.stream_contexts[kStream] = other;
  TestKernel kernel({"sm_90a"});
  ASSERT_TRUE(Launch(kernel, Grid(1)).ok());
  EXPECT_THAT(gpu_.launch_contexts, ElementsAre(other));
  EXPECT_EQ(gpu_.primary_retains, 0);
  EXPECT_EQ(gpu_.current, nullptr);
}

TEST_F(VariantLauncherTest, AFailedContextSwitchNamesTheKernel) {
  const CUcontext other = reinterpret_cast<CUcontext>(0xd000);
  gpu_.current = kContext;
  gpu_.stream_contexts[kStream] = other;
  gpu_.Fail("cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT);
  TestKernel kernel({"sm_90a"});
  absl::Status status = Launch(kernel, Grid(1));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("cuCtxPushCurrent"), HasSubstr("stream")));
  EXPECT_TRUE(gpu_.launches.empty());
  EXPECT_EQ(gpu_.current, kContext);
}

TEST_F(VariantLauncherTest, EmptyGridLaunchesNothing) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"});
  EXPECT_TRUE(Launch(kernel, Grid(0)).ok());
  EXPECT_TRUE(Launch(kernel, Grid(4, 0)).ok());
  EXPECT_TRUE(gpu_.launches.empty());
  EXPECT_TRUE(gpu_.loaded_images.empty());
}

TEST_F(VariantLauncherTest, LaunchErrorNamesKernelVariantAndCause) {
  gpu_.current = kContext;
  gpu_.launch_result = CUDA_ERROR_INVALID_VALUE;
  TestKernel kernel({"sm_90a"});
  absl::Status status = Launch(kernel, Grid(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "add_kernel [x_ptr=*fp32, n=i32, BLOCK=1024, num_warps=4]: "
            "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (invalid argument)");
}

TEST_F(VariantLauncherTest, NoImageErrorNamesKernelVariantAndArchs) {
  gpu_.current = kContext;
  gpu_.cc_major = 8;
  gpu_.cc_minor = 6;
  TestKernel kernel({"sm_90a", "sm_100a"});
  absl::Status status = Launch(kernel, Grid(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith("add_kernel [x_ptr=*fp32"), HasSubstr("sm_86"),
                    HasSubstr("sm_90a, sm_100a")));
}

TEST_F(VariantLauncherTest, ClustersForMultipleCtas) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"}, /*num_warps=*/4, /*shared_bytes=*/0,
                    /*num_ctas=*/2);
  ASSERT_TRUE(Launch(kernel, Grid(10, 3)).ok());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_THAT(gpu_.launches[0].grid, ElementsAre(20u, 3u, 1u));
  EXPECT_THAT(gpu_.launches[0].cluster, ElementsAre(2u, 1u, 1u));
}

TEST_F(VariantLauncherTest, ClustersNeedCuLaunchKernelEx) {
  gpu_.current = kContext;
  driver_.launch_kernel_ex = nullptr;
  TestKernel kernel({"sm_90a"}, 4, 0, /*num_ctas=*/2);
  absl::Status status = Launch(kernel, Grid(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("cuLaunchKernelEx"));
}

TEST_F(VariantLauncherTest,
       DependentLaunchScopeAllowsProgrammaticSerialization) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"});
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  {
    ProgrammaticDependentLaunch outer;
    {
      ProgrammaticDependentLaunch inner;
      ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
    }
    ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  }
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  ASSERT_EQ(gpu_.launches.size(), 4u);
  EXPECT_FALSE(gpu_.launches[0].programmatic);
  EXPECT_TRUE(gpu_.launches[1].programmatic);
  EXPECT_TRUE(gpu_.launches[2].programmatic);
  EXPECT_FALSE(gpu_.launches[3].programmatic);
  // No cluster comes with it.
  EXPECT_THAT(gpu_.launches[1].cluster, ElementsAre(0u, 0u, 0u));
  EXPECT_THAT(gpu_.launches[1].grid, ElementsAre(4u, 1u, 1u));
}

TEST_F(VariantLauncherTest, DependentLaunchWithClusters) {
  gpu_.current = kContext;
  TestKernel kernel({"sm_90a"}, 4, 0, /*num_ctas=*/2);
  ProgrammaticDependentLaunch pdl;
  ASSERT_TRUE(Launch(kernel, Grid(3)).ok());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_TRUE(gpu_.launches[0].programmatic);
  EXPECT_THAT(gpu_.launches[0].cluster, ElementsAre(2u, 1u, 1u));
}

TEST_F(VariantLauncherTest, DependentLaunchNeedsCuLaunchKernelEx) {
  gpu_.current = kContext;
  driver_.launch_kernel_ex = nullptr;
  TestKernel kernel({"sm_90a"});
  ProgrammaticDependentLaunch pdl;
  absl::Status status = Launch(kernel, Grid(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith("add_kernel [x_ptr=*fp32"),
                    HasSubstr("programmatic dependent launch"),
                    HasSubstr("cuLaunchKernelEx")));
}

// Makes `kernel`'s entry point take the global scratch pointer after its two
// parameters, with `bytes` of it per program in its sm_90a image.
void UseGlobalScratch(TestKernel &kernel, int bytes) {
  kernel.mutable_variant().global_scratch_arg = 2;
  kernel.mutable_image(0).global_scratch_bytes = bytes;
}

class GlobalScratchLaunchTest : public VariantLauncherTest {
protected:
  GlobalScratchLaunchTest() {
    gpu_.current = kContext;
    gpu_.scratch_arg = 2;
  }
};

TEST_F(GlobalScratchLaunchTest, EveryProgramGetsItsBytes) {
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 128);
  ASSERT_TRUE(Launch(kernel, Grid(10, 3, 2)).ok());
  ASSERT_EQ(gpu_.allocations.size(), 1u);
  EXPECT_EQ(gpu_.allocations[0].bytes, 128u * 10 * 3 * 2);
  // Allocated with the thread's capture mode relaxed (the stream may be
  // being captured), in the stream's context.
  EXPECT_EQ(gpu_.allocations[0].capture_mode, CU_STREAM_CAPTURE_MODE_RELAXED);
  EXPECT_THAT(gpu_.alloc_contexts, ElementsAre(kContext));
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_NE(gpu_.launches[0].scratch, 0u);
  EXPECT_EQ(gpu_.launches[0].scratch, gpu_.allocations[0].pointer);
  // The other slots are the caller's.
  EXPECT_EQ(args_[0], nullptr);
  EXPECT_EQ(args_[1], nullptr);
}

TEST_F(GlobalScratchLaunchTest, ClustersCountEveryCta) {
  TestKernel kernel({"sm_90a"}, /*num_warps=*/4, /*shared_bytes=*/0,
                    /*num_ctas=*/2);
  UseGlobalScratch(kernel, 128);
  ASSERT_TRUE(Launch(kernel, Grid(3, 2)).ok());
  ASSERT_EQ(gpu_.allocations.size(), 1u);
  EXPECT_EQ(gpu_.allocations[0].bytes, 128u * 3 * 2 * 2);
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_EQ(gpu_.launches[0].scratch, gpu_.allocations[0].pointer);
}

TEST_F(GlobalScratchLaunchTest, AStreamReusesItsBufferForSmallerLaunches) {
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 256);
  for (unsigned programs : {8u, 8u, 2u, 1u})
    ASSERT_TRUE(Launch(kernel, Grid(programs)).ok());
  ASSERT_EQ(gpu_.allocations.size(), 1u);
  ASSERT_EQ(gpu_.launches.size(), 4u);
  for (const FakeGpu::Launch &launch : gpu_.launches)
    EXPECT_EQ(launch.scratch, gpu_.allocations[0].pointer);
}

TEST_F(GlobalScratchLaunchTest, ABiggerLaunchGrowsTheBufferAndKeepsTheOld) {
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 128);
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  ASSERT_TRUE(Launch(kernel, Grid(5)).ok());
  // Grown to twice the old size at least, so that the next launches fit.
  ASSERT_EQ(gpu_.allocations.size(), 2u);
  EXPECT_EQ(gpu_.allocations[0].bytes, 512u);
  EXPECT_EQ(gpu_.allocations[1].bytes, 1024u);
  ASSERT_TRUE(Launch(kernel, Grid(8)).ok());
  EXPECT_EQ(gpu_.allocations.size(), 2u);
  // The first launch (or a graph that captured it) may still be running.
  EXPECT_TRUE(gpu_.frees.empty());
  EXPECT_EQ(gpu_.live_allocations, 2);
  ASSERT_EQ(gpu_.launches.size(), 3u);
  EXPECT_EQ(gpu_.launches[0].scratch, gpu_.allocations[0].pointer);
  EXPECT_EQ(gpu_.launches[1].scratch, gpu_.allocations[1].pointer);
  EXPECT_EQ(gpu_.launches[2].scratch, gpu_.allocations[1].pointer);
  EXPECT_NE(gpu_.allocations[0].pointer, gpu_.allocations[1].pointer);
}

TEST_F(GlobalScratchLaunchTest, EachStreamHasItsOwnBuffer) {
  const CUstream other = reinterpret_cast<CUstream>(0x6000);
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 128);
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  ASSERT_TRUE(Launch(kernel, Grid(4), other).ok());
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  ASSERT_EQ(gpu_.allocations.size(), 2u);
  ASSERT_EQ(gpu_.launches.size(), 3u);
  EXPECT_EQ(gpu_.launches[0].scratch, gpu_.allocations[0].pointer);
  EXPECT_EQ(gpu_.launches[1].scratch, gpu_.allocations[1].pointer);
  EXPECT_EQ(gpu_.launches[2].scratch, gpu_.allocations[0].pointer);
}

// The parameter is there on every arch; an image that uses no scratch gets a
// null pointer and allocates nothing.
TEST_F(GlobalScratchLaunchTest, AnImageWithoutScratchPassesNull) {
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 0);
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  EXPECT_TRUE(gpu_.allocations.empty());
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_NE(args_[2], nullptr); // the slot points to a null pointer
  EXPECT_EQ(gpu_.launches[0].scratch, 0u);
}

TEST_F(GlobalScratchLaunchTest, VariantsWithoutTheSlotAreUntouched) {
  TestKernel kernel({"sm_90a"});
  kernel.mutable_image(0).global_scratch_bytes = 128; // no slot, though
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  EXPECT_TRUE(gpu_.allocations.empty());
  EXPECT_EQ(args_[2], nullptr);
  ASSERT_EQ(gpu_.launches.size(), 1u);
  EXPECT_EQ(gpu_.launches[0].args, args_);
}

TEST_F(GlobalScratchLaunchTest, AFailedAllocationNamesKernelVariantAndSize) {
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 128);
  gpu_.Fail("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  absl::Status status = Launch(kernel, Grid(4));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "add_kernel [x_ptr=*fp32, n=i32, BLOCK=1024, num_warps=4]: "
            "cuMemAlloc of 512 bytes for the global scratch buffer: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_TRUE(gpu_.launches.empty());
  // Once memory is back, the next launch allocates.
  gpu_.Heal();
  ASSERT_TRUE(Launch(kernel, Grid(4)).ok());
  EXPECT_EQ(gpu_.allocations.size(), 1u);
}

TEST_F(GlobalScratchLaunchTest, BytesBeyond64BitsAreAnError) {
  TestKernel kernel({"sm_90a"});
  UseGlobalScratch(kernel, 1 << 30);
  absl::Status status =
      Launch(kernel, Grid(0xffffffffu, 0xffffffffu, 0xffffffffu));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(StartsWith("add_kernel [x_ptr=*fp32"),
                    HasSubstr("overflows 64 bits")));
  EXPECT_TRUE(gpu_.allocations.empty());
  EXPECT_TRUE(gpu_.launches.empty());
}

// A generated launcher's status for a `:1` argument that is not 1.
TEST(LaunchStatus, ArgumentNotOneNamesKernelArgumentAndExpectation) {
  TestKernel kernel({"sm_90a"});
  const absl::Status status = ArgumentNotOne(kernel.info(), "stride_ak", "7");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "add_kernel: argument stride_ak is 7, but the kernel was compiled "
            "for stride_ak equal to 1 (':1' in its specialization); pass 1, "
            "or add a specialization without ':1' for it");
}

} // namespace
} // namespace kiln::internal
