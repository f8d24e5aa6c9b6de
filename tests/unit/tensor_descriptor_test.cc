// Descriptor arguments packed into the kernel ABI (kiln/internal/tensor_map.h)
// against a fake cuTensorMapEncodeTiled: what is checked before anything is
// encoded, what the driver is asked, and the cache of encodings.

#include <cuda.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fake_cuda_driver.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/tensor_descriptor_args.h"
#include "kiln/internal/tensor_map.h"
#include "kiln/kernel_info.h"
#include "kiln/tensor_descriptor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

using ::kiln::testing::FakeGpu;
using ::kiln::testing::MakeFakeCudaDriver;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What the fake cuTensorMapEncodeTiled was asked, and what it answers.
struct EncodeCall {
  CUtensorMapDataType type;
  unsigned rank;
  const void *address;
  std::vector<uint64_t> dims, strides;
  std::vector<unsigned> box, element_strides;
  CUtensorMapSwizzle swizzle;
};
std::vector<EncodeCall> *calls = nullptr;
CUresult encode_result = CUDA_SUCCESS;

CUresult FakeEncodeTiled(CUtensorMap *map, CUtensorMapDataType type,
                         cuuint32_t rank, void *address, const cuuint64_t *dims,
                         const cuuint64_t *strides, const cuuint32_t *box,
                         const cuuint32_t *element_strides,
                         CUtensorMapInterleave, CUtensorMapSwizzle swizzle,
                         CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  calls->push_back(EncodeCall{
      type, rank, address, std::vector<uint64_t>(dims, dims + rank),
      std::vector<uint64_t>(strides, strides + rank - 1),
      std::vector<unsigned>(box, box + rank),
      std::vector<unsigned>(element_strides, element_strides + rank), swizzle});
  if (encode_result != CUDA_SUCCESS)
    return encode_result;
  // Bytes that identify the call, so that tests can tell encodings apart.
  std::memset(map, static_cast<int>(calls->size()), sizeof(*map));
  return CUDA_SUCCESS;
}

const KernelInfo kKernel = {"tile_kernel", nullptr, 0};
constexpr int32_t kBlock[] = {128, 64};
constexpr int32_t kBox[] = {128, 64};
// A descriptor parameter whose variant reads the tensor map (TMA), and one
// whose variant does not.
constexpr TensorDescriptorParam kMapped = {"a_desc", "fp16", 2,
                                           kBlock,   kBox,   128};
constexpr TensorDescriptorParam kUnmapped = {"a_desc", "fp16",  2,
                                             kBlock,   nullptr, 0};

half *DevicePointer(uintptr_t address) {
  return reinterpret_cast<half *>(address);
}

class TensorDescriptorTest : public ::testing::Test {
protected:
  TensorDescriptorTest() : driver_(MakeFakeCudaDriver(gpu_)) {
    driver_.tensor_map_encode_tiled = FakeEncodeTiled;
    calls = &calls_;
    encode_result = CUDA_SUCCESS;
  }
  ~TensorDescriptorTest() override { calls = nullptr; }

  absl::Status Pack(const TensorDescriptorParam &param,
                    const TensorDescriptorView &desc) {
    return PackTensorDescriptorWith(
        [&]() -> absl::StatusOr<const CudaDriver *> { return &driver_; },
        cache_, kKernel, param, desc, &args_.tensor_map, &args_.base,
        args_.shape, args_.strides);
  }

  FakeGpu gpu_;
  CudaDriver driver_;
  TensorMapCache cache_;
  std::vector<EncodeCall> calls_;
  TensorDescriptorArgs<2> args_;
};

TEST_F(TensorDescriptorTest, PacksTheAbiAndEncodesInnermostFirst) {
  // A 1000 x 72 fp16 matrix in rows of 80 elements (160 bytes).
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {128, 64});
  ASSERT_TRUE(Pack(kMapped, desc.view()).ok());
  EXPECT_EQ(args_.base, reinterpret_cast<const void *>(0x10000));
  EXPECT_THAT(args_.shape, ElementsAre(1000, 72));
  EXPECT_THAT(args_.strides, ElementsAre(80, 1));
  ASSERT_EQ(calls_.size(), 1u);
  const EncodeCall &call = calls_[0];
  EXPECT_EQ(call.type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(call.rank, 2u);
  EXPECT_EQ(call.address, reinterpret_cast<const void *>(0x10000));
  EXPECT_THAT(call.dims, ElementsAre(72, 1000));
  EXPECT_THAT(call.strides, ElementsAre(160));
  EXPECT_THAT(call.box, ElementsAre(64, 128));
  EXPECT_THAT(call.element_strides, ElementsAre(1, 1));
  EXPECT_EQ(call.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(args_.tensor_map.bytes[0], 1); // the fake's encoding
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&args_.tensor_map) % 64, 0u);
}

TEST_F(TensorDescriptorTest, AVariantThatDoesNotReadTheMapGetsZeros) {
  std::memset(&args_.tensor_map, 0xab, sizeof(args_.tensor_map));
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {128, 64});
  ASSERT_TRUE(Pack(kUnmapped, desc.view()).ok());
  EXPECT_TRUE(calls_.empty());
  for (unsigned char byte : args_.tensor_map.bytes)
    ASSERT_EQ(byte, 0);
  EXPECT_THAT(args_.shape, ElementsAre(1000, 72));
}

TEST_F(TensorDescriptorTest, EncodingsAreCachedPerArgumentTuple) {
  TensorDescriptor<half, 2> a(DevicePointer(0x10000), {1000, 72}, {80, 1},
                              {128, 64});
  TensorDescriptor<half, 2> b(DevicePointer(0x20000), {1000, 72}, {80, 1},
                              {128, 64});
  TensorDescriptor<half, 2> c(DevicePointer(0x10000), {999, 72}, {80, 1},
                              {128, 64});
  ASSERT_TRUE(Pack(kMapped, a.view()).ok());
  ASSERT_TRUE(Pack(kMapped, a.view()).ok());
  EXPECT_EQ(cache_.encodes(), 1);
  EXPECT_EQ(args_.tensor_map.bytes[0], 1);
  ASSERT_TRUE(Pack(kMapped, b.view()).ok()); // another base
  ASSERT_TRUE(Pack(kMapped, c.view()).ok()); // another shape
  EXPECT_EQ(cache_.encodes(), 3);
  EXPECT_EQ(args_.tensor_map.bytes[0], 3);
  ASSERT_TRUE(Pack(kMapped, a.view()).ok());
  EXPECT_EQ(cache_.encodes(), 3);
  EXPECT_EQ(args_.tensor_map.bytes[0], 1); // the first encoding again
  EXPECT_EQ(cache_.size(), 3u);
}

TEST_F(TensorDescriptorTest, AFullCacheStartsOver) {
  TensorMapCache small(/*capacity=*/2);
  TensorMapRequest request;
  request.data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  request.rank = 1;
  request.dims[0] = 64;
  request.box[0] = 64;
  for (uintptr_t address : {0x1000, 0x2000, 0x3000}) {
    request.address = reinterpret_cast<const void *>(address);
    ASSERT_TRUE(small.Get(driver_, request).ok());
  }
  EXPECT_EQ(small.size(), 1u);
  EXPECT_EQ(small.encodes(), 3);
}

TEST_F(TensorDescriptorTest, RankMismatchNamesKernelAndArgument) {
  TensorDescriptor<half, 3> desc(DevicePointer(0x10000), {4, 1000, 72},
                                 {80000, 80, 1}, {1, 128, 64});
  absl::Status status = Pack(kMapped, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("tile_kernel: argument a_desc"),
                    HasSubstr("tensordesc<fp16[128,64]>"), HasSubstr("rank 3"),
                    HasSubstr("compiled for rank 2")));
  EXPECT_TRUE(calls_.empty());
}

TEST_F(TensorDescriptorTest, ElementTypeMismatch) {
  float *base = reinterpret_cast<float *>(0x10000);
  TensorDescriptor<float, 2> desc(base, {1000, 72}, {80, 1}, {128, 64});
  absl::Status status = Pack(kMapped, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("a_desc"), HasSubstr("holds fp32 elements"),
                    HasSubstr("compiled for fp16")));
}

TEST_F(TensorDescriptorTest, BlockShapeMismatch) {
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {64, 64});
  absl::Status status = Pack(kUnmapped, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("block shape [64, 64]"),
                                      HasSubstr("compiled for [128, 64]")));
}

TEST_F(TensorDescriptorTest, MisalignedBase) {
  TensorDescriptor<half, 2> desc(DevicePointer(0x10008), {1000, 72}, {80, 1},
                                 {128, 64});
  for (const TensorDescriptorParam *param : {&kMapped, &kUnmapped}) {
    absl::Status status = Pack(*param, desc.view());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), AllOf(HasSubstr("a_desc"), HasSubstr("10008"),
                                        HasSubstr("not 16-byte aligned")));
  }
  TensorDescriptor<half, 2> null(nullptr, {1000, 72}, {80, 1}, {128, 64});
  EXPECT_EQ(Pack(kUnmapped, null.view()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(calls_.empty());
}

TEST_F(TensorDescriptorTest, MisalignedStride) {
  // 76 fp16 elements are 152 bytes: not a multiple of 16.
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {76, 1},
                                 {128, 64});
  absl::Status status = Pack(kMapped, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stride of dimension 0 is 76 elements"),
                    HasSubstr("152 bytes"), HasSubstr("multiples of 16")));
  TensorDescriptor<half, 2> strided(DevicePointer(0x10000), {1000, 72}, {80, 2},
                                    {128, 64});
  EXPECT_THAT(Pack(kMapped, strided.view()).message(),
              HasSubstr("the last stride is 2"));
  TensorDescriptor<half, 2> negative(DevicePointer(0x10000), {1000, 72},
                                     {-80, 1}, {128, 64});
  EXPECT_EQ(Pack(kMapped, negative.view()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(calls_.empty());
}

TEST_F(TensorDescriptorTest, ExtentsMustFitTheAbi) {
  TensorDescriptor<half, 2> empty(DevicePointer(0x10000), {0, 72}, {80, 1},
                                  {128, 64});
  EXPECT_THAT(Pack(kUnmapped, empty.view()).message(),
              HasSubstr("extent 0 of dimension 0"));
  TensorDescriptor<half, 2> huge(DevicePointer(0x10000), {int64_t{1} << 31, 72},
                                 {80, 1}, {128, 64});
  EXPECT_THAT(Pack(kUnmapped, huge.view()).message(),
              HasSubstr("outside [1, 2^31)"));
}

TEST_F(TensorDescriptorTest, BoxTooLarge) {
  static constexpr int32_t kBigBlock[] = {512, 64};
  static constexpr int32_t kBigBox[] = {512, 64};
  constexpr TensorDescriptorParam kBig = {"a_desc",  "fp16",  2,
                                          kBigBlock, kBigBox, 128};
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {512, 64});
  absl::Status status = Pack(kBig, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("box [512, 64]"), HasSubstr("outside [1, 256]")));
  // The box's last dimension must fit the swizzle: 128 fp16 are 256 bytes.
  static constexpr int32_t kWideBlock[] = {64, 128};
  constexpr TensorDescriptorParam kWide = {"a_desc",   "fp16",     2,
                                           kWideBlock, kWideBlock, 128};
  TensorDescriptor<half, 2> wide(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {64, 128});
  EXPECT_THAT(Pack(kWide, wide.view()).message(),
              AllOf(HasSubstr("spans 256 bytes"),
                    HasSubstr("at most the swizzle (128 bytes)")));
  EXPECT_TRUE(calls_.empty());
}

TEST_F(TensorDescriptorTest, DriverErrorsAreAnnotatedAndNotCached) {
  encode_result = CUDA_ERROR_INVALID_VALUE;
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {128, 64});
  absl::Status status = Pack(kMapped, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("tile_kernel: argument a_desc"),
                                      HasSubstr("cuTensorMapEncodeTiled"),
                                      HasSubstr("CUDA_ERROR_INVALID_VALUE")));
  encode_result = CUDA_SUCCESS;
  EXPECT_TRUE(Pack(kMapped, desc.view()).ok());
  EXPECT_EQ(cache_.encodes(), 2);
}

// A config's tensor map is for its sm_90a variants (TMA); on an older device
// the launcher runs another variant, which never reads it, so a map the
// driver refuses to encode there is zeros rather than an error.
TEST_F(TensorDescriptorTest, AnOlderDeviceIgnoresAMapItCannotEncode) {
  encode_result = CUDA_ERROR_INVALID_VALUE;
  gpu_.current = gpu_.primary;
  gpu_.cc_major = 8;
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {128, 64});
  std::memset(args_.tensor_map.bytes, 0xff, sizeof(args_.tensor_map.bytes));
  ASSERT_TRUE(Pack(kMapped, desc.view()).ok());
  for (unsigned char byte : args_.tensor_map.bytes)
    ASSERT_EQ(byte, 0);
  EXPECT_EQ(args_.base, desc.view().base);
  // On a device with TMA the failure stands.
  gpu_.cc_major = 9;
  EXPECT_EQ(Pack(kMapped, desc.view()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TensorDescriptorTest, ADriverWithoutTheEntryPointIsAStatus) {
  driver_.tensor_map_encode_tiled = nullptr;
  TensorDescriptor<half, 2> desc(DevicePointer(0x10000), {1000, 72}, {80, 1},
                                 {128, 64});
  absl::Status status = Pack(kMapped, desc.view());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("lacks cuTensorMapEncodeTiled"));
  // A variant that does not read the map needs no driver at all.
  EXPECT_TRUE(Pack(kUnmapped, desc.view()).ok());
}

TEST(TensorDescriptorValueTest, RowMajorStrides) {
  float *base = reinterpret_cast<float *>(0x1000);
  auto desc = TensorDescriptor<float, 3>::RowMajor(base, {4, 5, 6}, {1, 2, 8});
  EXPECT_THAT(desc.strides(), ElementsAre(30, 6, 1));
  TensorDescriptorView view = desc.view();
  EXPECT_EQ(view.rank, 3);
  EXPECT_EQ(view.element_bytes, 4);
  EXPECT_STREQ(view.dtype, "fp32");
  EXPECT_EQ(view.block_shape[2], 8);
}

} // namespace
} // namespace kiln::internal
