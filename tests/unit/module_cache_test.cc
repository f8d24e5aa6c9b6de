#include "kiln/internal/module_cache.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "fake_cuda_driver.h"
#include "kiln/internal/cuda_driver.h"
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
using ::testing::Pair;

const CUcontext kContextA = reinterpret_cast<CUcontext>(0xa000);
const CUcontext kContextB = reinterpret_cast<CUcontext>(0xb000);

class ModuleCacheTest : public ::testing::Test {
protected:
  ModuleCacheTest() : driver_(MakeFakeCudaDriver(gpu_)), cache_(&driver_) {
    gpu_.current = kContextA;
  }

  // Looks the variant up in the current context, loading it if needed.
  absl::StatusOr<const LoadedFunction *> Get(const VariantInfo &variant) {
    const uint64_t key = cache_.ContextKey(gpu_.current);
    if (const LoadedFunction *f = cache_.Lookup(variant, key))
      return f;
    return cache_.Load(variant, gpu_.current, key);
  }

  FakeGpu gpu_;
  CudaDriver driver_;
  ModuleCache cache_;
};

TEST_F(ModuleCacheTest, LoadsOncePerContext) {
  TestKernel kernel({"sm_80", "sm_90a"});
  absl::StatusOr<const LoadedFunction *> first = Get(kernel.variant());
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<const LoadedFunction *> second = Get(kernel.variant());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(gpu_.loaded_images.size(), 1u);

  gpu_.current = kContextB;
  absl::StatusOr<const LoadedFunction *> other = Get(kernel.variant());
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *first);
  EXPECT_EQ((*other)->context, kContextB);
  EXPECT_EQ(gpu_.loaded_images.size(), 2u);

  // Back in the first context: found in the map, not loaded again.
  gpu_.current = kContextA;
  absl::StatusOr<const LoadedFunction *> again = Get(kernel.variant());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(gpu_.loaded_images.size(), 2u);
  EXPECT_EQ(cache_.modules_loaded(), 2);
}

TEST_F(ModuleCacheTest, LookupIsTheLockFreeFastPath) {
  TestKernel kernel({"sm_90a"});
  const uint64_t key = cache_.ContextKey(kContextA);
  EXPECT_EQ(cache_.Lookup(kernel.variant(), key), nullptr);
  absl::StatusOr<const LoadedFunction *> loaded =
      cache_.Load(kernel.variant(), kContextA, key);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(cache_.Lookup(kernel.variant(), key), *loaded);
  EXPECT_EQ(cache_.Lookup(kernel.variant(), cache_.ContextKey(kContextB)),
            nullptr);
}

TEST_F(ModuleCacheTest, AnotherCacheDoesNotSeeThisCachesFunctions) {
  TestKernel kernel({"sm_90a"});
  ASSERT_TRUE(Get(kernel.variant()).ok());
  ModuleCache other(&driver_);
  EXPECT_EQ(other.Lookup(kernel.variant(), other.ContextKey(kContextA)),
            nullptr);
}

TEST_F(ModuleCacheTest, ContextIdsTellReusedAddressesApart) {
  TestKernel kernel({"sm_90a"});
  gpu_.context_ids[kContextA] = 1;
  ASSERT_TRUE(Get(kernel.variant()).ok());
  // The context is destroyed and a new one gets the same address.
  gpu_.context_ids[kContextA] = 2;
  ASSERT_TRUE(Get(kernel.variant()).ok());
  EXPECT_EQ(gpu_.loaded_images.size(), 2u);
}

TEST_F(ModuleCacheTest, WithoutContextIdsKeysByAddress) {
  gpu_.has_context_ids = false;
  CudaDriver driver = MakeFakeCudaDriver(gpu_);
  ModuleCache cache(&driver);
  EXPECT_EQ(cache.ContextKey(kContextA),
            reinterpret_cast<uintptr_t>(kContextA));
}

TEST_F(ModuleCacheTest, LoadsTheImageForTheDevice) {
  TestKernel kernel({"sm_80", "sm_90a"});
  gpu_.cc_major = 8;
  gpu_.cc_minor = 6;
  absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(std::string((*f)->image->arch), "sm_80");
  EXPECT_THAT(gpu_.loaded_images, ElementsAre(kernel.image_data(0)));

  gpu_.current = kContextB; // say, another device
  gpu_.cc_major = 9;
  gpu_.cc_minor = 0;
  f = Get(kernel.variant());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(std::string((*f)->image->arch), "sm_90a");
}

// What a build embeds by default for archs sm_80 and sm_90a: both cubins and
// the sm_80 PTX, which is loaded (for the driver to JIT) only on a device
// neither cubin runs on.
TEST_F(ModuleCacheTest, PtxFallbackOnlyWhereNoCubinRuns) {
  TestKernel kernel({"sm_80", "sm_90a", "ptx:sm_80"});
  struct Case {
    int major, minor;
    const char *arch;
    ImageFormat format;
  };
  const Case cases[] = {{8, 0, "sm_80", ImageFormat::kCubin},
                        {8, 9, "sm_80", ImageFormat::kCubin},
                        {9, 0, "sm_90a", ImageFormat::kCubin},
                        {10, 0, "sm_80", ImageFormat::kPtx},
                        {12, 0, "sm_80", ImageFormat::kPtx}};
  uintptr_t context = 0x1000;
  for (const Case &c : cases) {
    gpu_.current = reinterpret_cast<CUcontext>(context += 0x1000);
    gpu_.cc_major = c.major;
    gpu_.cc_minor = c.minor;
    absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(std::string((*f)->image->arch), c.arch) << c.major << c.minor;
    EXPECT_EQ((*f)->image->format, c.format) << c.major << c.minor;
    EXPECT_EQ(gpu_.loaded_images.back(),
              kernel.image_data(c.format == ImageFormat::kPtx ? 2
                                : c.major == 9                ? 1
                                                              : 0));
  }
}

// A compressed image reaches cuModuleLoadData inflated.
TEST_F(ModuleCacheTest, CompressedImagesAreInflatedBeforeLoading) {
  if (dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL) == nullptr)
    GTEST_SKIP() << "SKIPPED: libzstd.so.1 is not installed";
  const std::string content = "inflated PTX for sm_80";
  // One raw block in a single-segment frame (see image_data_test.cc).
  static std::vector<unsigned char> frame = {
      0x28, 0xb5, 0x2f, 0xfd, 0x20, static_cast<unsigned char>(content.size())};
  const unsigned header = 1u | (static_cast<unsigned>(content.size()) << 3);
  frame.push_back(header & 0xff);
  frame.push_back((header >> 8) & 0xff);
  frame.push_back((header >> 16) & 0xff);
  frame.insert(frame.end(), content.begin(), content.end());
  TestKernel kernel({"ptx:sm_80"});
  CubinImage &image = kernel.mutable_image(0);
  image.data = frame.data();
  image.size = frame.size();
  image.compression = ImageCompression::kZstd;
  image.uncompressed_size = content.size();
  gpu_.cc_major = 9;
  absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(gpu_.loaded_images.size(), 1u);
  EXPECT_NE(gpu_.loaded_images[0], static_cast<const void *>(frame.data()));
  EXPECT_EQ(std::string(static_cast<const char *>(gpu_.loaded_images[0]),
                        content.size()),
            content);
}

TEST_F(ModuleCacheTest, NoImageForTheDevice) {
  TestKernel kernel({"sm_80", "sm_90a"});
  gpu_.cc_major = 7;
  gpu_.cc_minor = 5;
  absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(f.status().message()),
              AllOf(HasSubstr("sm_75"), HasSubstr("sm_80, sm_90a")));
  EXPECT_TRUE(gpu_.loaded_images.empty());
  EXPECT_EQ(cache_.modules_loaded(), 0);
}

TEST_F(ModuleCacheTest, DriverRejectsTheImage) {
  TestKernel kernel({"sm_90a"});
  gpu_.load_result = CUDA_ERROR_INVALID_IMAGE;
  absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              AllOf(HasSubstr("sm_90a cubin"), HasSubstr("cuModuleLoadData"),
                    HasSubstr("CUDA_ERROR_INVALID_IMAGE")));
  // A later attempt tries again rather than caching the failure.
  gpu_.load_result = CUDA_SUCCESS;
  EXPECT_TRUE(Get(kernel.variant()).ok());
}

TEST_F(ModuleCacheTest, MissingEntryPointUnloadsTheModule) {
  TestKernel kernel({"sm_90a"});
  gpu_.expected_entry = "some_other_kernel";
  absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("cuModuleGetFunction(add_kernel)"));
  EXPECT_EQ(gpu_.unloads, 1);
}

TEST_F(ModuleCacheTest, SmallSharedMemoryNeedsNoAttribute) {
  TestKernel kernel({"sm_90a"}, 4, /*shared_bytes=*/48 * 1024);
  ASSERT_TRUE(Get(kernel.variant()).ok());
  EXPECT_TRUE(gpu_.function_attributes.empty());
}

TEST_F(ModuleCacheTest, LargeSharedMemoryRaisesTheLimit) {
  TestKernel kernel({"sm_90a"}, 4, /*shared_bytes=*/100 * 1024);
  ASSERT_TRUE(Get(kernel.variant()).ok());
  EXPECT_THAT(gpu_.function_attributes,
              ElementsAre(Pair(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               100 * 1024)));
}

TEST_F(ModuleCacheTest, TooMuchSharedMemoryForTheDevice) {
  TestKernel kernel({"sm_80"}, 4, /*shared_bytes=*/200 * 1024);
  gpu_.cc_major = 8;
  gpu_.shared_optin_limit = 163 * 1024;
  absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(f.status().message()),
              AllOf(HasSubstr("204800 bytes"), HasSubstr("166912")));
  EXPECT_EQ(gpu_.unloads, 1);
}

TEST_F(ModuleCacheTest, ConcurrentFirstUseLoadsOnce) {
  TestKernel kernel({"sm_90a"});
  std::vector<std::thread> threads;
  std::vector<const LoadedFunction *> results(16);
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        absl::StatusOr<const LoadedFunction *> f = Get(kernel.variant());
        ASSERT_TRUE(f.ok());
        results[t] = *f;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(gpu_.loaded_images.size(), 1u);
  for (const LoadedFunction *f : results)
    EXPECT_EQ(f, results[0]);
}

} // namespace
} // namespace kiln::internal
