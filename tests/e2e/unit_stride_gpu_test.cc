// The unit-stride variant on a real GPU: tests/e2e/strided_matmul.py built
// by triton_kernel() (general, aligned-pointers, aligned and unit-stride
// variants), called through the generated launcher row-major with unit
// strides, transposed, with sizes that are not multiples of 16, and with a
// misaligned output. The launch observer shows which
// variant ran; every result is compared with a CPU product. Labelled `gpu`;
// every test skips, saying why, without a driver or GPU.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/strided_matmul.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::ElementsAre;

constexpr int kBlock = 64; // BM = BN = 64 in every specialization

// The names of the arguments `variant` takes equal to 1.
std::vector<std::string> EqualToOne(const kiln::VariantInfo *variant) {
  std::vector<std::string> names;
  for (int i = 0; variant != nullptr && i < variant->num_params; ++i)
    if (variant->params[i].equal_to_1)
      names.push_back(variant->params[i].name);
  return names;
}

// The names of the arguments `variant` assumes divisible by 16.
std::vector<std::string> Aligned(const kiln::VariantInfo *variant) {
  std::vector<std::string> names;
  for (int i = 0; variant != nullptr && i < variant->num_params; ++i)
    if (variant->params[i].divisibility == 16)
      names.push_back(variant->params[i].name);
  return names;
}

void Record(const kiln::LaunchEvent &event, void *user_data) {
  *static_cast<const kiln::VariantInfo **>(user_data) = event.variant;
}

class UnitStrideGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
  }

  // Runs C = A @ B for an M x K A and K x N B, A and C row-major, B
  // row-major or (`b_transposed`) stored as its transpose, C `c_offset`
  // floats past its allocation, through the launcher; checks C against the
  // CPU and returns the variant that ran.
  const kiln::VariantInfo *Run(int M, int N, int K, bool b_transposed,
                               int c_offset = 0) {
    // Small integers: fp16 holds them exactly and the fp32 sums are exact.
    std::vector<kiln::half> a(M * K), b(K * N);
    std::vector<float> af(M * K), bf(K * N), expected(M * N, 0.0f);
    for (int i = 0; i < M * K; ++i) {
      af[i] = static_cast<float>((i * 7 % 5) - 2);
      a[i] = kiln::half(af[i]);
    }
    for (int i = 0; i < K * N; ++i) {
      bf[i] = static_cast<float>((i * 3 % 7) - 3);
      b[i] = kiln::half(bf[i]);
    }
    // b[k, n] lives at k * stride_bk + n * stride_bn.
    const int stride_bk = b_transposed ? 1 : N;
    const int stride_bn = b_transposed ? K : 1;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
          expected[m * N + n] +=
              af[m * K + k] * bf[k * stride_bk + n * stride_bn];

    kiln::DeviceBuffer da = *kiln::DeviceBuffer::Allocate(a.size() * 2);
    kiln::DeviceBuffer db = *kiln::DeviceBuffer::Allocate(b.size() * 2);
    kiln::DeviceBuffer dc =
        *kiln::DeviceBuffer::Allocate((M * N + c_offset) * 4);
    EXPECT_TRUE(da.CopyFromHost(a.data(), a.size() * 2).ok());
    EXPECT_TRUE(db.CopyFromHost(b.data(), b.size() * 2).ok());
    EXPECT_TRUE(dc.Fill(0xff).ok());

    const kiln::VariantInfo *ran = nullptr;
    kiln::SetLaunchObserver(&Record, &ran);
    absl::Status status = kernels::launch_strided_matmul(
        kiln::Grid(kiln::cdiv(M, kBlock), kiln::cdiv(N, kBlock)), nullptr,
        da.data<kiln::half>(), db.data<kiln::half>(),
        dc.data<float>() + c_offset, M, N, K,
        /*stride_am=*/K, /*stride_ak=*/1, stride_bk, stride_bn,
        /*stride_cm=*/N, /*stride_cn=*/1);
    kiln::SetLaunchObserver(nullptr, nullptr);
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_TRUE(kiln::SynchronizeStream(nullptr).ok());

    std::vector<float> c(M * N + c_offset);
    EXPECT_TRUE(dc.CopyToHost(c.data(), c.size() * 4).ok());
    c.erase(c.begin(), c.begin() + c_offset);
    int wrong = 0;
    for (int i = 0; i < M * N; ++i)
      if (c[i] != expected[i] && ++wrong <= 5)
        ADD_FAILURE() << "C[" << i / N << ", " << i % N << "] = " << c[i]
                      << ", expected " << expected[i];
    EXPECT_EQ(wrong, 0);
    return ran;
  }
};

// The ordinary row-major call, sizes multiples of 16: the unit-stride
// variant, whose accesses are vectorized along the rows.
TEST_F(UnitStrideGpuTest, RowMajorCallRunsTheUnitStrideVariant) {
  const kiln::VariantInfo *ran = Run(128, 192, 96, /*b_transposed=*/false);
  ASSERT_NE(ran, nullptr);
  EXPECT_THAT(EqualToOne(ran),
              ElementsAre("stride_ak", "stride_bn", "stride_cn"));
  EXPECT_TRUE(ran->aligned);
  EXPECT_EQ(ran->num_params, 12);
}

// B transposed (stride_bk = 1): the unit-stride variant's assumptions fail,
// and so do the aligned one's (1 is no multiple of 16): the aligned-pointers
// variant.
TEST_F(UnitStrideGpuTest, TransposedOperandRunsTheAlignedPointersVariant) {
  const kiln::VariantInfo *ran = Run(128, 64, 64, /*b_transposed=*/true);
  ASSERT_NE(ran, nullptr);
  EXPECT_THAT(EqualToOne(ran), ElementsAre());
  EXPECT_THAT(Aligned(ran), ElementsAre("a_ptr", "b_ptr", "c_ptr"));
}

// Unit strides but M not a multiple of 16: the aligned-pointers variant,
// masks and all.
TEST_F(UnitStrideGpuTest, RaggedSizesRunTheAlignedPointersVariant) {
  const kiln::VariantInfo *ran = Run(100, 64, 48, /*b_transposed=*/false);
  ASSERT_NE(ran, nullptr);
  EXPECT_THAT(EqualToOne(ran), ElementsAre());
  EXPECT_THAT(Aligned(ran), ElementsAre("a_ptr", "b_ptr", "c_ptr"));
}

// C one float past its allocation: the general variant.
TEST_F(UnitStrideGpuTest, MisalignedOutputRunsTheGeneralVariant) {
  const kiln::VariantInfo *ran =
      Run(128, 64, 64, /*b_transposed=*/false, /*c_offset=*/1);
  ASSERT_NE(ran, nullptr);
  EXPECT_THAT(EqualToOne(ran), ElementsAre());
  EXPECT_FALSE(ran->aligned);
}

// The inventory lists the four variants in the order the launcher tries
// them: unit-stride, aligned, aligned-pointers, general.
TEST(UnitStrideInventory, FourVariantsUnitStrideFirst) {
  const kiln::KernelInfo &info = kernels::strided_matmul_info();
  ASSERT_EQ(info.num_variants, 4);
  EXPECT_THAT(EqualToOne(&info.variants[0]),
              ElementsAre("stride_ak", "stride_bn", "stride_cn"));
  EXPECT_THAT(EqualToOne(&info.variants[1]), ElementsAre());
  EXPECT_EQ(Aligned(&info.variants[1]).size(), 12u);
  EXPECT_THAT(Aligned(&info.variants[2]),
              ElementsAre("a_ptr", "b_ptr", "c_ptr"));
  EXPECT_FALSE(info.variants[3].aligned);
}

} // namespace
