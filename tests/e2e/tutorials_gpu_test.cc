// Upstream's tutorial 06 (fused attention forward, `_attn_fwd`, descriptors
// made in the kernel from pointers) and tutorial 09 (the persistent matmuls:
// pointers, host descriptors, descriptors made in the kernel), the Python
// files unchanged, built by triton_kernel for sm_80 and sm_90a and run
// through their generated launchers against CPU references, with the
// tutorials' tolerance (atol 1e-2). Sizes that are multiples of 16 run the
// aligned variants (TMA on sm_90a); the ragged ones the aligned-pointers
// variants (which know the tensors aligned, not their extents or strides).
// Tutorial 06's counts (batch, heads) are not multiples of 16 here: with
// allocated tensors it runs the aligned-pointers variant (TMA on sm_90a),
// with tensors one element past an allocation the general one.
// (Tutorial 06 assumes N_CTX a multiple of BLOCK_M: its heads are rows of
// one tensor, and a ragged block would write the next head's.)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/float_types.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/tutorial06_attention.h"
#include "tests/e2e/tutorial09_descriptor_persistent.h"
#include "tests/e2e/tutorial09_descriptor_persistent_ws.h"
#include "tests/e2e/tutorial09_persistent.h"
#include "tests/e2e/tutorial09_tma_persistent.h"
#include "gtest/gtest.h"

namespace {

using kiln::half;

class TutorialsGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
  }
};

// Values in [-1, 1) from a fixed linear congruential sequence.
std::vector<half> RandomHalves(size_t n, uint32_t seed) {
  std::vector<half> values(n);
  uint32_t state = seed;
  for (half &v : values) {
    state = state * 1664525u + 1013904223u;
    v = half(static_cast<float>(state >> 8) / static_cast<float>(1 << 23) -
             1.0f);
  }
  return values;
}

kiln::DeviceBuffer Upload(const void *data, size_t bytes) {
  absl::StatusOr<kiln::DeviceBuffer> buffer =
      kiln::DeviceBuffer::Allocate(std::max<size_t>(bytes, 16));
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(buffer->CopyFromHost(data, bytes).ok());
  return std::move(*buffer);
}

template <typename T>
std::vector<T> Download(const kiln::DeviceBuffer &buffer, size_t n) {
  std::vector<T> values(n);
  EXPECT_TRUE(buffer.CopyToHost(values.data(), n * sizeof(T)).ok());
  return values;
}

//===----------------------------------------------------------------------===//
// Tutorial 06: o = softmax(q k^T * sm_scale) v per (batch, head), and
// M = log2 of the row sums of 2^(q k^T * sm_scale * log2 e), causal or not.
//===----------------------------------------------------------------------===//

// What a launch ran, as the launch observer saw it.
struct Ran {
  const kiln::VariantInfo *variant = nullptr;
  const kiln::CubinImage *image = nullptr;
};

void Record(const kiln::LaunchEvent &event, void *user_data) {
  *static_cast<Ran *>(user_data) = Ran{event.variant, event.image};
}

// Which arguments `variant` assumes divisible by 16: "all" (pointers and
// integers), "pointers" or "none".
std::string Assumed(const kiln::VariantInfo *variant) {
  bool pointers = false, integers = false;
  for (int i = 0; i < variant->num_params; ++i) {
    const kiln::ParamInfo &p = variant->params[i];
    if (p.divisibility == 16)
      (p.type[0] == '*' ? pointers : integers) = true;
  }
  return integers ? "all" : pointers ? "pointers" : "none";
}

// Runs tutorial 06's forward through the launcher, with q, k, v and o
// `offset` elements past their allocations, checks it against the CPU and
// returns what ran.
Ran CheckAttention(int Z, int H, int N, bool causal,
                   bool warp_specialize = false, int offset = 0) {
  constexpr int D = 64;
  constexpr float kScale = 0.5f;
  const size_t elements = size_t(Z) * H * N * D;
  std::vector<half> q = RandomHalves(elements + offset, 1),
                    k = RandomHalves(elements + offset, 2),
                    v = RandomHalves(elements + offset, 3);
  q.erase(q.begin(), q.begin() + offset);
  k.erase(k.begin(), k.begin() + offset);
  v.erase(v.begin(), v.begin() + offset);
  // The host vectors start at element `offset` of the device buffers.
  auto upload = [&](const std::vector<half> &values) {
    std::vector<half> padded(offset, half(0.0f));
    padded.insert(padded.end(), values.begin(), values.end());
    return Upload(padded.data(), padded.size() * sizeof(half));
  };
  kiln::DeviceBuffer dq = upload(q), dk = upload(k), dv = upload(v);
  kiln::DeviceBuffer dout = upload(std::vector<half>(elements, half(0.0f)));
  std::vector<float> m_zeros(size_t(Z) * H * N, 0.0f);
  kiln::DeviceBuffer dm =
      Upload(m_zeros.data(), m_zeros.size() * sizeof(float));

  e2e::t06::_attn_fwd_config config;
  config.STAGE = causal ? 3 : 1;
  config.warp_specialize = warp_specialize;
  Ran ran;
  kiln::SetLaunchObserver(&Record, &ran);
  absl::Status status = e2e::t06::launch__attn_fwd(
      config, kiln::Grid(kiln::cdiv(N, int(config.BLOCK_M)), Z * H, 1), nullptr,
      kScale, dm.data<float>(), Z, H, dq.data<half>() + offset,
      dk.data<half>() + offset, dv.data<half>() + offset,
      dout.data<half>() + offset, N);
  kiln::SetLaunchObserver(nullptr, nullptr);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  if (!status.ok())
    return ran;
  std::vector<half> out = Download<half>(dout, elements + offset);
  out.erase(out.begin(), out.begin() + offset);
  std::vector<float> m = Download<float>(dm, m_zeros.size());

  int wrong = 0;
  std::vector<double> s(N);
  for (int zh = 0; zh < Z * H; ++zh) {
    const size_t base = size_t(zh) * N * D;
    for (int i = 0; i < N; ++i) {
      const int last = causal ? i : N - 1;
      double top = -INFINITY;
      for (int j = 0; j <= last; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += double(float(q[base + i * D + d])) *
                 double(float(k[base + j * D + d]));
        s[j] = dot * kScale * M_LOG2E;
        top = std::max(top, s[j]);
      }
      double sum = 0;
      for (int j = 0; j <= last; ++j)
        sum += std::exp2(s[j] - top);
      const double expected_m = top + std::log2(sum);
      if (std::abs(m[zh * N + i] - expected_m) > 1e-2 && ++wrong <= 10)
        ADD_FAILURE() << "M[" << zh << "][" << i << "] = " << m[zh * N + i]
                      << ", expected " << expected_m;
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (int j = 0; j <= last; ++j)
          o += std::exp2(s[j] - top) * double(float(v[base + j * D + d]));
        o /= sum;
        const float got = float(out[base + i * D + d]);
        if (std::abs(got - o) > 1e-2 && ++wrong <= 10)
          ADD_FAILURE() << "o[" << zh << "][" << i << "][" << d << "] = " << got
                        << ", expected " << o;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  return ran;
}

TEST_F(TutorialsGpuTest, AttentionForward) {
  Ran ran = CheckAttention(/*Z=*/2, /*H=*/3, /*N=*/256, /*causal=*/false);
  // Allocated tensors, counts not multiples of 16: the aligned-pointers
  // variant, whose sm_90a image makes tensor maps in the global scratch.
  ASSERT_NE(ran.variant, nullptr);
  EXPECT_EQ(Assumed(ran.variant), "pointers") << ran.variant->name;
  ASSERT_NE(ran.image, nullptr);
  if (std::string(ran.image->arch) == "sm_90a")
    EXPECT_GT(ran.image->global_scratch_bytes, 0);
}

// A batch of one, 12 heads and 1000-token-like counts are common; only the
// pointers need to be aligned for the fast variant.
TEST_F(TutorialsGpuTest, AttentionForwardBatchOfOne) {
  Ran ran = CheckAttention(/*Z=*/1, /*H=*/12, /*N=*/128, /*causal=*/true);
  ASSERT_NE(ran.variant, nullptr);
  EXPECT_EQ(Assumed(ran.variant), "pointers") << ran.variant->name;
}

// Tensors one element (2 bytes) past their allocations: the general variant.
TEST_F(TutorialsGpuTest, AttentionForwardMisalignedTensors) {
  Ran ran = CheckAttention(/*Z=*/1, /*H=*/2, /*N=*/128, /*causal=*/false,
                           /*warp_specialize=*/false, /*offset=*/1);
  ASSERT_NE(ran.variant, nullptr);
  EXPECT_EQ(Assumed(ran.variant), "none") << ran.variant->name;
  ASSERT_NE(ran.image, nullptr);
  EXPECT_EQ(ran.image->global_scratch_bytes, 0);
}

TEST_F(TutorialsGpuTest, AttentionForwardCausal) {
  CheckAttention(/*Z=*/1, /*H=*/2, /*N=*/384, /*causal=*/true);
}

// warp_specialize=True: on sm_90a a producer warpgroup issues the k and v
// copies; when causal, its two loops share the rings, the slot count
// running on from the first into the second.
TEST_F(TutorialsGpuTest, AttentionForwardWarpSpecialized) {
  CheckAttention(/*Z=*/2, /*H=*/3, /*N=*/256, /*causal=*/false,
                 /*warp_specialize=*/true);
}

TEST_F(TutorialsGpuTest, AttentionForwardCausalWarpSpecialized) {
  CheckAttention(/*Z=*/1, /*H=*/2, /*N=*/384, /*causal=*/true,
                 /*warp_specialize=*/true);
}

//===----------------------------------------------------------------------===//
// Tutorial 09: c = a b^T, a M x K and b N x K row-major, c M x N, fp16.
//===----------------------------------------------------------------------===//

enum class Form {
  kPointers,
  kHostDescriptors,
  kDeviceDescriptors,
  // Device descriptors, WARP_SPECIALIZE=True: on sm_90a a producer
  // warpgroup issues the TMA copies.
  kWarpSpecialized
};

void CheckPersistentMatmul(Form form, int M, int N, int K) {
  std::vector<half> a = RandomHalves(size_t(M) * K, 4),
                    b = RandomHalves(size_t(N) * K, 5);
  kiln::DeviceBuffer da = Upload(a.data(), a.size() * sizeof(half));
  kiln::DeviceBuffer db = Upload(b.data(), b.size() * sizeof(half));
  std::vector<half> zeros(size_t(M) * N, half(0.0f));
  kiln::DeviceBuffer dc = Upload(zeros.data(), zeros.size() * sizeof(half));
  constexpr int kPrograms = 8; // the specializations' NUM_SMS
  const int tiles = kiln::cdiv(M, 128) * kiln::cdiv(N, 128);
  const kiln::Grid grid(std::min(kPrograms, tiles));
  absl::Status status;
  switch (form) {
  case Form::kPointers:
    // b's storage read as the K x N matrix b^T: strides (1, K).
    status = e2e::t09::launch_matmul_kernel_persistent(
        grid, nullptr, da.data<half>(), db.data<half>(), dc.data<half>(), M, N,
        K, /*stride_am=*/K, /*stride_ak=*/1, /*stride_bk=*/1,
        /*stride_bn=*/K, /*stride_cm=*/N, /*stride_cn=*/1);
    break;
  case Form::kHostDescriptors: {
    using Desc = kiln::TensorDescriptor<half, 2>;
    status = e2e::t09::launch_matmul_kernel_tma_persistent(
        grid, nullptr, Desc(da.data<half>(), {M, K}, {K, 1}, {128, 64}),
        Desc(db.data<half>(), {N, K}, {K, 1}, {128, 64}),
        Desc(dc.data<half>(), {M, N}, {N, 1}, {128, 128}), M, N, K);
    break;
  }
  case Form::kDeviceDescriptors:
    status = e2e::t09::launch_matmul_kernel_descriptor_persistent(
        grid, nullptr, da.data<half>(), db.data<half>(), dc.data<half>(), M, N,
        K);
    break;
  case Form::kWarpSpecialized:
    status = e2e::t09ws::launch_matmul_kernel_descriptor_persistent(
        grid, nullptr, da.data<half>(), db.data<half>(), dc.data<half>(), M, N,
        K);
    break;
  }
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  std::vector<half> c = Download<half>(dc, size_t(M) * N);
  int wrong = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double expected = 0;
      for (int k = 0; k < K; ++k)
        expected += double(float(a[size_t(i) * K + k])) *
                    double(float(b[size_t(j) * K + k]));
      // fp16 output: its rounding, then the tutorial's atol.
      const float got = float(c[size_t(i) * N + j]);
      if (std::abs(got - expected) > 1e-2 + 1e-3 * std::abs(expected) &&
          ++wrong <= 10)
        ADD_FAILURE() << "c[" << i << "][" << j << "] = " << got
                      << ", expected " << expected;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// Multiples of 16: the aligned variants, on sm_90a TMA (tensor maps from
// the launcher, or encoded by each program); 3 x 2 tiles over 6 programs,
// K's last tile half past the edge.
TEST_F(TutorialsGpuTest, PersistentMatmulPointers) {
  CheckPersistentMatmul(Form::kPointers, 384, 256, 352);
}
TEST_F(TutorialsGpuTest, PersistentMatmulHostDescriptors) {
  CheckPersistentMatmul(Form::kHostDescriptors, 384, 256, 352);
}
TEST_F(TutorialsGpuTest, PersistentMatmulDeviceDescriptors) {
  CheckPersistentMatmul(Form::kDeviceDescriptors, 384, 256, 352);
}
TEST_F(TutorialsGpuTest, PersistentMatmulWarpSpecialized) {
  CheckPersistentMatmul(Form::kWarpSpecialized, 384, 256, 352);
}

// Ragged sizes, more tiles than programs: the aligned-pointers variants (host
// descriptors keep TMA loads; their rows must stay whole 16-byte chunks).
TEST_F(TutorialsGpuTest, PersistentMatmulPointersRagged) {
  CheckPersistentMatmul(Form::kPointers, 1000, 264, 200);
}
TEST_F(TutorialsGpuTest, PersistentMatmulHostDescriptorsRagged) {
  CheckPersistentMatmul(Form::kHostDescriptors, 1000, 264, 200);
}
TEST_F(TutorialsGpuTest, PersistentMatmulDeviceDescriptorsRagged) {
  CheckPersistentMatmul(Form::kDeviceDescriptors, 1000, 264, 200);
}
TEST_F(TutorialsGpuTest, PersistentMatmulWarpSpecializedRagged) {
  CheckPersistentMatmul(Form::kWarpSpecialized, 1000, 264, 200);
}

} // namespace
