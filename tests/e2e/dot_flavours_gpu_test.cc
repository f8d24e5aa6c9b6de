// Every tensor-core flavour on a real GPU: tests/e2e/dot_flavours.py's
// dot_nn (B row-major) and dot_nt (B given transposed, K contiguous), built
// for plain sm_90 (ldmatrix/mma.sync, with element-wise fragment loads for
// 32- and 8-bit operands that are not K-contiguous) and for sm_90a (wgmma
// where it applies), for fp16, bf16, tf32 (fp32 operands), int8 and fp8
// e4m3. Sizes that are multiples of 16 run the aligned variants, whose
// loops are pipelined through cp.async rings; ragged sizes run the general
// variants (masked tails; 8-bit operands then stay in registers and take
// the unpipelined tensor-core lowering). Operands are small integers, which
// every flavour holds exactly, so every element of C is compared exactly;
// one tf32 case uses random values and a tolerance. Labelled `gpu`; skips,
// saying why, without a driver or GPU.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/dot_nn_mma.h"
#include "tests/e2e/dot_nn_wgmma.h"
#include "tests/e2e/dot_nt_mma.h"
#include "tests/e2e/dot_nt_trans_mma.h"
#include "tests/e2e/dot_nt_trans_wgmma.h"
#include "tests/e2e/dot_nt_wgmma.h"
#include "gtest/gtest.h"

namespace {

template <typename T> T From(float v) { return T(v); }
template <> int8_t From<int8_t>(float v) { return int8_t(v); }
template <> float From<float>(float v) { return v; }
template <typename T> float ToFloat(T v) { return float(v); }

class DotFlavoursGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
  }

  // C = A @ B, M x K times K x N; B stored K x N (row-major) or, when
  // `transposed`, N x K. `launch(a, b, c, stride_b)` calls the launcher.
  // Exact comparison unless `tolerance` > 0 (then random operands).
  template <typename In, typename Out, typename Launch>
  void Check(int M, int N, int K, bool transposed, Launch launch,
             float tolerance = 0) {
    std::vector<In> a(M * K), b(K * N);
    std::vector<float> af(M * K), bf(K * N);
    std::mt19937 rng(M * 7 + N * 3 + K);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int i = 0; i < M * K; ++i) {
      af[i] = tolerance > 0 ? uniform(rng) : float((i * 7 % 5) - 2);
      a[i] = From<In>(af[i]);
      af[i] = ToFloat(a[i]);
    }
    for (int i = 0; i < K * N; ++i) {
      bf[i] = tolerance > 0 ? uniform(rng) : float((i * 3 % 7) - 3);
      b[i] = From<In>(bf[i]);
      bf[i] = ToFloat(b[i]);
    }
    // b[k, n] at k * N + n, or n * K + k when transposed.
    std::vector<double> expected(M * N, 0.0);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
          expected[m * N + n] += double(af[m * K + k]) *
                                 bf[transposed ? n * K + k : k * N + n];

    kiln::DeviceBuffer da = *kiln::DeviceBuffer::Allocate(a.size() * sizeof(In));
    kiln::DeviceBuffer db = *kiln::DeviceBuffer::Allocate(b.size() * sizeof(In));
    kiln::DeviceBuffer dc = *kiln::DeviceBuffer::Allocate(M * N * sizeof(Out));
    ASSERT_TRUE(da.CopyFromHost(a.data(), a.size() * sizeof(In)).ok());
    ASSERT_TRUE(db.CopyFromHost(b.data(), b.size() * sizeof(In)).ok());
    ASSERT_TRUE(dc.Fill(0xff).ok());
    absl::Status status = launch(da.data<In>(), db.data<In>(), dc.data<Out>(),
                                 transposed ? K : N);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());
    std::vector<Out> c(M * N);
    ASSERT_TRUE(dc.CopyToHost(c.data(), c.size() * sizeof(Out)).ok());
    int wrong = 0;
    for (int i = 0; i < M * N; ++i) {
      double got = double(c[i]);
      bool ok = tolerance > 0 ? std::fabs(got - expected[i]) <= tolerance
                              : got == expected[i];
      if (!ok && ++wrong <= 5)
        ADD_FAILURE() << "C[" << i / N << ", " << i % N << "] = " << got
                      << ", expected " << expected[i] << " (M=" << M
                      << " N=" << N << " K=" << K
                      << (transposed ? ", B transposed)" : ")");
    }
    EXPECT_EQ(wrong, 0);
  }
};

constexpr int kBM = 64, kBN = 64;
kiln::Grid GridFor(int M, int N) {
  return kiln::Grid(kiln::cdiv(M, kBM), kiln::cdiv(N, kBN));
}

// One test per (build, B layout, flavour), each at an aligned and a ragged
// size. NS is the launchers' namespace, KERNEL dot_nn or dot_nt.
#define KILN_DOT_TEST(NS, KERNEL, TRANSPOSED, NAME, IN, OUT)                    \
  TEST_F(DotFlavoursGpuTest, NS##_##KERNEL##_##NAME) {                         \
    for (auto [M, N, K] : {std::tuple{128, 192, 256}, {100, 72, 200}}) {       \
      Check<IN, OUT>(M, N, K, TRANSPOSED, [&](IN *a, IN *b, OUT *c, int sb) { \
        return e2e::NS::launch_##KERNEL(GridFor(M, N), nullptr, a, b, c, M, N, \
                                        K, K, sb, N);                          \
      });                                                                      \
    }                                                                          \
  }

#define KILN_DOT_TESTS(NS, KERNEL, TRANSPOSED)                                 \
  KILN_DOT_TEST(NS, KERNEL, TRANSPOSED, fp16, kiln::half, float)               \
  KILN_DOT_TEST(NS, KERNEL, TRANSPOSED, bf16, kiln::bfloat16, float)           \
  KILN_DOT_TEST(NS, KERNEL, TRANSPOSED, tf32, float, float)                    \
  KILN_DOT_TEST(NS, KERNEL, TRANSPOSED, int8, int8_t, int32_t)                 \
  KILN_DOT_TEST(NS, KERNEL, TRANSPOSED, fp8e4m3, kiln::float8_e4m3, float)

KILN_DOT_TESTS(mma, dot_nn, false)
KILN_DOT_TESTS(mma, dot_nt, true)
KILN_DOT_TESTS(wgmma, dot_nn, false)
KILN_DOT_TESTS(wgmma, dot_nt, true)

// B loaded as an N x K tile and transposed in the kernel (`.T`): the
// pipeliner loads it through transposed pointers into a K-contiguous ring.
TEST_F(DotFlavoursGpuTest, TransposedTileOperand) {
  for (auto [M, N, K] : {std::tuple{128, 192, 256}, {100, 72, 200}}) {
    Check<kiln::half, float>(
        M, N, K, true, [&](kiln::half *a, kiln::half *b, float *c, int sb) {
          return e2e::mma::launch_dot_nt_trans(GridFor(M, N), nullptr, a, b, c,
                                               M, N, K, K, sb, N);
        });
    Check<kiln::half, float>(
        M, N, K, true, [&](kiln::half *a, kiln::half *b, float *c, int sb) {
          return e2e::wgmma::launch_dot_nt_trans(GridFor(M, N), nullptr, a, b,
                                                 c, M, N, K, K, sb, N);
        });
  }
}

// The matmul acceptance's odd shapes (M, N, K = 1000, 1001, 999; K = 16;
// K = 8200), fp16 and tf32, through both builds' general variants.
TEST_F(DotFlavoursGpuTest, OddShapes) {
  for (auto [M, N, K] :
       {std::tuple{1000, 1001, 999}, {64, 64, 16}, {256, 256, 8200}}) {
    Check<kiln::half, float>(
        M, N, K, false, [&](kiln::half *a, kiln::half *b, float *c, int sb) {
          return e2e::mma::launch_dot_nn(GridFor(M, N), nullptr, a, b, c, M,
                                         N, K, K, sb, N);
        });
    Check<kiln::half, float>(
        M, N, K, false, [&](kiln::half *a, kiln::half *b, float *c, int sb) {
          return e2e::wgmma::launch_dot_nn(GridFor(M, N), nullptr, a, b, c, M,
                                           N, K, K, sb, N);
        });
    Check<float, float>(M, N, K, true,
                        [&](float *a, float *b, float *c, int sb) {
                          return e2e::wgmma::launch_dot_nt(GridFor(M, N),
                                                           nullptr, a, b, c, M,
                                                           N, K, K, sb, N);
                        });
  }
}

// tf32 rounds its operands: random values agree with the fp64 product
// within tf32's precision (10-bit mantissas, K = 256 products of |x| <= 1).
TEST_F(DotFlavoursGpuTest, Tf32RoundsLikeTf32) {
  const int M = 128, N = 128, K = 256;
  for (bool transposed : {false, true}) {
    Check<float, float>(
        M, N, K, transposed,
        [&](float *a, float *b, float *c, int sb) {
          return transposed ? e2e::wgmma::launch_dot_nt(GridFor(M, N), nullptr,
                                                        a, b, c, M, N, K, K,
                                                        sb, N)
                            : e2e::wgmma::launch_dot_nn(GridFor(M, N), nullptr,
                                                        a, b, c, M, N, K, K,
                                                        sb, N);
        },
        /*tolerance=*/0.05f);
  }
}

} // namespace
