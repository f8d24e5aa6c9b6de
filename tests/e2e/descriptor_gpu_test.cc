// Tensor descriptors through the generated launchers
// (tests/e2e/descriptor_tiles.py): host descriptor arguments
// (kiln::TensorDescriptor) and descriptors made in the kernel, with tiles
// reaching past the tensor's edges, whose out-of-bounds elements must read
// as zero and never be written. The GPU tests skip, saying why, without a
// driver or GPU; the argument checks need neither (a bad descriptor is
// refused before anything is launched).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/float_types.h"
#include "kiln/launch_observer.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/descriptor_accumulate.h"
#include "tests/e2e/descriptor_accumulate_host.h"
#include "tests/e2e/descriptor_device_matmul.h"
#include "tests/e2e/descriptor_device_persistent_matmul.h"
#include "tests/e2e/descriptor_matmul.h"
#include "tests/e2e/descriptor_persistent_matmul.h"
#include "tests/e2e/descriptor_scale.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int kBM = 32, kBN = 64; // scale_tiles' compiled block shape

// A 16-byte aligned address that is never dereferenced: the checks refuse
// the descriptors before any launch.
float *FakeDevicePointer() { return reinterpret_cast<float *>(0x100000); }

using Desc2 = kiln::TensorDescriptor<float, 2>;

absl::Status LaunchScale(const Desc2 &in, const Desc2 &out) {
  return kernels::launch_scale_tiles(kiln::Grid(1, 1), nullptr, in, out,
                                     FakeDevicePointer(), 2.0f);
}

TEST(DescriptorArgumentTest, BlockShapeMustBeTheCompiledOne) {
  Desc2 good(FakeDevicePointer(), {100, 70}, {80, 1}, {kBM, kBN});
  Desc2 wrong(FakeDevicePointer(), {100, 70}, {80, 1}, {64, 64});
  absl::Status status = LaunchScale(wrong, good);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("scale_tiles"), HasSubstr("in_desc"),
                    HasSubstr("block shape [64, 64]"),
                    HasSubstr("compiled for [32, 64]")));
  status = LaunchScale(good, wrong);
  EXPECT_THAT(status.message(), HasSubstr("argument out_desc"));
}

TEST(DescriptorArgumentTest, BaseMustBe16ByteAligned) {
  Desc2 good(FakeDevicePointer(), {100, 70}, {80, 1}, {kBM, kBN});
  Desc2 misaligned(FakeDevicePointer() + 1, {100, 70}, {80, 1}, {kBM, kBN});
  absl::Status status = LaunchScale(misaligned, good);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("scale_tiles"), HasSubstr("in_desc"),
                    HasSubstr("not 16-byte aligned")));
}

TEST(DescriptorArgumentTest, StridesMustBeMultiplesOf16Bytes) {
  Desc2 good(FakeDevicePointer(), {100, 70}, {80, 1}, {kBM, kBN});
  // 70 floats are 280 bytes, not a multiple of 16.
  Desc2 odd_stride(FakeDevicePointer(), {100, 70}, {70, 1}, {kBM, kBN});
  absl::Status status = LaunchScale(good, odd_stride);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("out_desc"), HasSubstr("280 bytes")));
  // The last dimension must be contiguous.
  Desc2 column(FakeDevicePointer(), {100, 70}, {1, 100}, {kBM, kBN});
  status = LaunchScale(column, good);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("in_desc"), HasSubstr("last stride is 100")));
}

class DescriptorGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
  }
};

// Host descriptors: out = 2 * in over an M x N tensor in rows of `ld`
// floats, 32 x 64 tiles (`rows` rows allocated); the padding columns and the
// rows past the tensor hold sentinels that must neither be read nor written.
void CheckScaleTiles(int M, int N, int ld, int rows) {
  constexpr float kPastTheEdge = 1000.0f, kUntouched = -1.0f;
  std::vector<float> in(rows * ld, kPastTheEdge), out(rows * ld, kUntouched);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      in[i * ld + j] = static_cast<float>((i * N + j) % 13 - 6);
    }
  }
  absl::StatusOr<kiln::DeviceBuffer> d_in =
      kiln::DeviceBuffer::Allocate(in.size() * sizeof(float));
  absl::StatusOr<kiln::DeviceBuffer> d_out =
      kiln::DeviceBuffer::Allocate(out.size() * sizeof(float));
  const int tiles_m = kiln::cdiv(M, kBM), tiles_n = kiln::cdiv(N, kBN);
  absl::StatusOr<kiln::DeviceBuffer> d_sums =
      kiln::DeviceBuffer::Allocate(tiles_m * tiles_n * sizeof(float));
  ASSERT_TRUE(d_in.ok() && d_out.ok() && d_sums.ok());
  ASSERT_TRUE(d_in->CopyFromHost(in.data(), in.size() * sizeof(float)).ok());
  ASSERT_TRUE(d_out->CopyFromHost(out.data(), out.size() * sizeof(float)).ok());

  Desc2 in_desc(d_in->data<float>(), {M, N}, {ld, 1}, {kBM, kBN});
  Desc2 out_desc(d_out->data<float>(), {M, N}, {ld, 1}, {kBM, kBN});
  absl::Status status = kernels::launch_scale_tiles(
      kiln::Grid(tiles_m, tiles_n), nullptr, in_desc, out_desc,
      d_sums->data<float>(), 2.0f);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());

  std::vector<float> got(out.size()), sums(tiles_m * tiles_n);
  ASSERT_TRUE(d_out->CopyToHost(got.data(), got.size() * sizeof(float)).ok());
  ASSERT_TRUE(
      d_sums->CopyToHost(sums.data(), sums.size() * sizeof(float)).ok());
  int wrong = 0;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < ld; ++j) {
      const bool inside = i < M && j < N;
      const float expected = inside ? 2.0f * in[i * ld + j] : kUntouched;
      if (got[i * ld + j] != expected && ++wrong <= 10) {
        ADD_FAILURE() << "out[" << i << "][" << j << "] = " << got[i * ld + j]
                      << ", expected " << expected
                      << (inside ? "" : " (outside the tensor: unwritten)");
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  for (int tm = 0; tm < tiles_m; ++tm) {
    for (int tn = 0; tn < tiles_n; ++tn) {
      float expected = 0;
      for (int i = tm * kBM; i < (tm + 1) * kBM && i < M; ++i) {
        for (int j = tn * kBN; j < (tn + 1) * kBN && j < N; ++j) {
          expected += in[i * ld + j];
        }
      }
      EXPECT_EQ(sums[tm * tiles_n + tn], expected)
          << "tile (" << tm << ", " << tn
          << "): out-of-bounds elements must read as zero";
    }
  }
}

// Extents that are not multiples of 16 run a variant that assumes nothing
// of them (the aligned-pointers one): masked stores, elementwise at the edge
// (70 floats end mid-chunk).
TEST_F(DescriptorGpuTest, HostDescriptorsLoadAndStoreWithTails) {
  CheckScaleTiles(/*M=*/100, /*N=*/70, /*ld=*/80, /*rows=*/128);
}

// Extents that are multiples of 16 run the aligned variant, whose store is a
// TMA store on sm_90a: the box past row 112 and column 80 is not written.
TEST_F(DescriptorGpuTest, HostDescriptorTmaStoresStopAtTheTensorEdge) {
  CheckScaleTiles(/*M=*/112, /*N=*/80, /*ld=*/96, /*rows=*/128);
}

// acc += x, twice, over an M x N tensor of floats in rows of `ld` (the
// columns past N hold sentinels, acc starts at 1), each time through
// `launch(x, acc)`: every element of the tensor must be 1 + 2x, and the
// sentinels must stay.
void CheckAccumulateTiles(
    int M, int N, int ld,
    const std::function<absl::Status(float *x, float *acc)> &launch) {
  std::vector<float> x(M * ld, 1000.0f), acc(M * ld, 1.0f);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j)
      x[i * ld + j] = static_cast<float>(i - j);
  }
  absl::StatusOr<kiln::DeviceBuffer> d_x =
      kiln::DeviceBuffer::Allocate(x.size() * sizeof(float));
  absl::StatusOr<kiln::DeviceBuffer> d_acc =
      kiln::DeviceBuffer::Allocate(acc.size() * sizeof(float));
  ASSERT_TRUE(d_x.ok() && d_acc.ok());
  ASSERT_TRUE(d_x->CopyFromHost(x.data(), x.size() * sizeof(float)).ok());
  ASSERT_TRUE(d_acc->CopyFromHost(acc.data(), acc.size() * sizeof(float)).ok());
  for (int round = 0; round < 2; ++round) {
    absl::Status status = launch(d_x->data<float>(), d_acc->data<float>());
    ASSERT_TRUE(status.ok()) << status;
  }
  ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  std::vector<float> got(acc.size());
  ASSERT_TRUE(d_acc->CopyToHost(got.data(), got.size() * sizeof(float)).ok());
  int wrong = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < ld; ++j) {
      const float expected = j < N ? 1.0f + 2.0f * x[i * ld + j] : 1.0f;
      if (got[i * ld + j] != expected && ++wrong <= 10) {
        ADD_FAILURE() << "acc[" << i << "][" << j << "] = " << got[i * ld + j]
                      << ", expected " << expected;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

// Descriptors made in the kernel, with atomic adds through one: a 50 x 40
// tensor in rows of 48 floats and 16 x 32 tiles.
TEST_F(DescriptorGpuTest, DeviceDescriptorsAtomicAddWithTails) {
  constexpr int M = 50, N = 40, ld = 48, BM = 16, BN = 32;
  CheckAccumulateTiles(M, N, ld, [&](float *x, float *acc) {
    return kernels::launch_accumulate_tiles(
        kiln::Grid(kiln::cdiv(M, BM), kiln::cdiv(N, BN)), nullptr, x, acc, M, N,
        ld, ld);
  });
}

// Host descriptors over a 48 x 48 tensor in rows of 64 floats, 16 x 32
// tiles: the extents are multiples of 16, so the aligned variant runs,
// whose add is a TMA reduction on sm_90a; the tiles past column 48 must add
// nothing there.
TEST_F(DescriptorGpuTest, HostDescriptorAtomicAddStopsAtTheTensorEdge) {
  constexpr int M = 48, N = 48, ld = 64, BM = 16, BN = 32;
  CheckAccumulateTiles(M, N, ld, [&](float *x, float *acc) {
    return kernels::launch_accumulate_host_tiles(
        kiln::Grid(kiln::cdiv(M, BM), kiln::cdiv(N, BN)), nullptr,
        Desc2(x, {M, N}, {ld, 1}, {BM, BN}),
        Desc2(acc, {M, N}, {ld, 1}, {BM, BN}));
  });
}

// c = a @ b.T through `launch(a, b, c)`: a is M x K and b N x K in rows of
// `ld` halves (the padding past K holding sentinels), c M x N in rows of
// `ldc` floats, its allocation (`rows` x `ldc`) past the tensor holding
// sentinels that must stay. Small integers: the sums are exact in fp32.
void CheckHostDescriptorMatmul(
    int M, int N, int K, int ld, int ldc, int rows,
    const std::function<absl::Status(kiln::half *a, kiln::half *b, float *c)>
        &launch) {
  std::vector<kiln::half> a(M * ld, kiln::half(512.0f)),
      b(N * ld, kiln::half(512.0f));
  for (int i = 0; i < M; ++i) {
    for (int k = 0; k < K; ++k)
      a[i * ld + k] = kiln::half(static_cast<float>((i + 3 * k) % 7 - 3));
  }
  for (int j = 0; j < N; ++j) {
    for (int k = 0; k < K; ++k)
      b[j * ld + k] = kiln::half(static_cast<float>((2 * j + k) % 5 - 2));
  }
  constexpr float kUntouched = -7.0f;
  std::vector<float> c(rows * ldc, kUntouched);
  absl::StatusOr<kiln::DeviceBuffer> d_a =
      kiln::DeviceBuffer::Allocate(a.size() * sizeof(kiln::half));
  absl::StatusOr<kiln::DeviceBuffer> d_b =
      kiln::DeviceBuffer::Allocate(b.size() * sizeof(kiln::half));
  absl::StatusOr<kiln::DeviceBuffer> d_c =
      kiln::DeviceBuffer::Allocate(c.size() * sizeof(float));
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_c.ok());
  ASSERT_TRUE(d_a->CopyFromHost(a.data(), a.size() * sizeof(kiln::half)).ok());
  ASSERT_TRUE(d_b->CopyFromHost(b.data(), b.size() * sizeof(kiln::half)).ok());
  ASSERT_TRUE(d_c->CopyFromHost(c.data(), c.size() * sizeof(float)).ok());
  absl::Status status = launch(d_a->data<kiln::half>(), d_b->data<kiln::half>(),
                               d_c->data<float>());
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  std::vector<float> got(c.size());
  ASSERT_TRUE(d_c->CopyToHost(got.data(), got.size() * sizeof(float)).ok());
  int wrong = 0;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < ldc; ++j) {
      float expected = kUntouched;
      if (i < M && j < N) {
        expected = 0;
        for (int k = 0; k < K; ++k)
          expected += static_cast<float>(a[i * ld + k]) *
                      static_cast<float>(b[j * ld + k]);
      }
      if (got[i * ldc + j] != expected && ++wrong <= 10) {
        ADD_FAILURE() << "c[" << i << "][" << j << "] = " << got[i * ldc + j]
                      << ", expected " << expected;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

using HalfDesc = kiln::TensorDescriptor<kiln::half, 2>;

// M, N and K all ragged (100, 90, 200 with 64 x 128 x 32 tiles): on sm_90a
// the loop's operands are TMA copies from the tensor maps the launcher
// encodes with the metadata's box and swizzle; past every edge they must
// read as zero. The rows are padded to 208 halves (a multiple of 16 bytes).
TEST_F(DescriptorGpuTest, HostDescriptorMatmulWithRaggedEdges) {
  constexpr int M = 100, N = 90, K = 200, ld = 208, ldc = 128;
  CheckHostDescriptorMatmul(
      M, N, K, ld, ldc, /*rows=*/128,
      [&](kiln::half *a, kiln::half *b, float *c) {
        return kernels::launch_matmul_tiles(
            kiln::Grid(kiln::cdiv(M, 64), kiln::cdiv(N, 128)), nullptr,
            HalfDesc(a, {M, K}, {ld, 1}, {64, 32}),
            HalfDesc(b, {N, K}, {ld, 1}, {128, 32}), c, M, N, K, ldc);
      });
}

// persistent_matmul_tiles (64 x 64 x 64 tiles) with `programs` programs.
void CheckPersistentMatmul(int M, int N, int K, int ld, int ldc, int rows,
                           int programs) {
  CheckHostDescriptorMatmul(
      M, N, K, ld, ldc, rows, [&](kiln::half *a, kiln::half *b, float *c) {
        // A K of 0 still needs a descriptor: its shape's K is then 1 (an
        // extent of 0 cannot be encoded), and the kernel reads none of it.
        return kernels::launch_persistent_matmul_tiles(
            kiln::Grid(programs), nullptr,
            HalfDesc(a, {M, std::max(K, 1)}, {ld, 1}, {64, 64}),
            HalfDesc(b, {N, std::max(K, 1)}, {ld, 1}, {64, 64}),
            Desc2(c, {M, N}, {ldc, 1}, {64, 64}), M, N, K);
      });
}

// Sizes that are multiples of 16 run the aligned variant (a TMA store on
// sm_90a); 12 tiles over 5 programs, K's last tile half past the edge.
TEST_F(DescriptorGpuTest, FlattenedPersistentMatmul) {
  CheckPersistentMatmul(/*M=*/208, /*N=*/144, /*K=*/208, /*ld=*/224,
                        /*ldc=*/160, /*rows=*/224, /*programs=*/5);
}

// Ragged sizes run the aligned-pointers variant (a masked store, TMA loads).
TEST_F(DescriptorGpuTest, FlattenedPersistentMatmulRaggedEdges) {
  CheckPersistentMatmul(/*M=*/100, /*N=*/90, /*K=*/200, /*ld=*/208,
                        /*ldc=*/96, /*rows=*/128, /*programs=*/3);
}

// One K step per tile: each flattened iteration starts and ends a tile.
TEST_F(DescriptorGpuTest, FlattenedPersistentMatmulOneStepOfK) {
  CheckPersistentMatmul(/*M=*/128, /*N=*/192, /*K=*/16, /*ld=*/16,
                        /*ldc=*/192, /*rows=*/128, /*programs=*/4);
}

// No K at all: the nested loop runs, and every tile stores zeros.
TEST_F(DescriptorGpuTest, FlattenedPersistentMatmulWithoutK) {
  CheckPersistentMatmul(/*M=*/128, /*N=*/128, /*K=*/0, /*ld=*/16,
                        /*ldc=*/128, /*rows=*/144, /*programs=*/3);
}

// The global scratch share of the last image launched (-1 before any).
void RecordScratch(const kiln::LaunchEvent &event, void *scratch) {
  *static_cast<int *>(scratch) =
      event.image != nullptr ? event.image->global_scratch_bytes : -1;
}

// c = a @ b.T through descriptors the kernel makes (`persistent`: the
// flattened form over `programs` programs; else one program per tile of a
// 2-D grid). `tensor_maps` says whether the launched image encodes tensor
// maps: on sm_90a, for the aligned variant (sizes and strides multiples of
// 16), each program writes them in its 128-byte slots of the global scratch
// buffer; otherwise the loads and stores are masked ones.
void CheckDeviceDescriptorMatmul(int M, int N, int K, int ld, int ldc, int rows,
                                 bool persistent, int programs,
                                 bool tensor_maps) {
  int scratch = -1;
  kiln::SetLaunchObserver(&RecordScratch, &scratch);
  CheckHostDescriptorMatmul(
      M, N, K, ld, ldc, rows, [&](kiln::half *a, kiln::half *b, float *c) {
        if (persistent) {
          return kernels::launch_device_persistent_matmul_tiles(
              kiln::Grid(programs), nullptr, a, b, c, M, N, K, ld, ld, ldc);
        }
        return kernels::launch_device_matmul_tiles(
            kiln::Grid(kiln::cdiv(M, 64), kiln::cdiv(N, 128)), nullptr, a, b, c,
            M, N, K, ld, ld, ldc);
      });
  kiln::SetLaunchObserver(nullptr, nullptr);
  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  ASSERT_TRUE(device.ok());
  if (tensor_maps && device->compute_capability_major == 9) {
    // a, b and c: one map each.
    EXPECT_EQ(scratch, 3 * 128) << "the sm_90a image encodes its maps";
  } else {
    EXPECT_EQ(scratch, 0) << "no map is encoded";
  }
}

// Multiples of 16 (the aligned variant): TMA through the maps the programs
// encode, ragged tiles at M's and N's edges (208 = 3 x 64 + 16, 144 = 128 +
// 16) and K's last tile half past the edge, on a 4 x 2 grid.
TEST_F(DescriptorGpuTest, DeviceDescriptorMatmulEncodesTensorMaps) {
  CheckDeviceDescriptorMatmul(/*M=*/208, /*N=*/144, /*K=*/208, /*ld=*/224,
                              /*ldc=*/160, /*rows=*/224, /*persistent=*/false,
                              /*programs=*/0, /*tensor_maps=*/true);
}

// Ragged sizes: the aligned-pointers variant, which does not know the strides
// multiples of 16, so masked loads (no map is encoded).
TEST_F(DescriptorGpuTest, DeviceDescriptorMatmulRaggedEdges) {
  CheckDeviceDescriptorMatmul(/*M=*/100, /*N=*/90, /*K=*/200, /*ld=*/208,
                              /*ldc=*/96, /*rows=*/128, /*persistent=*/false,
                              /*programs=*/0, /*tensor_maps=*/false);
}

// The flattened persistent form: 12 tiles over 5 programs, each program
// encoding its maps once and reading them on every tile.
TEST_F(DescriptorGpuTest, DeviceDescriptorPersistentMatmul) {
  CheckDeviceDescriptorMatmul(/*M=*/208, /*N=*/144, /*K=*/208, /*ld=*/224,
                              /*ldc=*/160, /*rows=*/224, /*persistent=*/true,
                              /*programs=*/5, /*tensor_maps=*/true);
}

// K = 0: the maps of a and b describe tensors without columns (their
// extent is encoded as 0) and nothing reads them; c is stored as zeros.
TEST_F(DescriptorGpuTest, DeviceDescriptorMatmulWithoutK) {
  CheckDeviceDescriptorMatmul(/*M=*/128, /*N=*/128, /*K=*/0, /*ld=*/16,
                              /*ldc=*/128, /*rows=*/144, /*persistent=*/false,
                              /*programs=*/0, /*tensor_maps=*/true);
  CheckDeviceDescriptorMatmul(/*M=*/128, /*N=*/128, /*K=*/0, /*ld=*/16,
                              /*ldc=*/128, /*rows=*/144, /*persistent=*/true,
                              /*programs=*/3, /*tensor_maps=*/true);
}

// More programs than tiles, and the scratch buffer grown for the larger
// grid: the extra programs encode their maps and store nothing.
TEST_F(DescriptorGpuTest, DeviceDescriptorPersistentMatmulIdlePrograms) {
  CheckDeviceDescriptorMatmul(/*M=*/64, /*N=*/128, /*K=*/64, /*ld=*/64,
                              /*ldc=*/128, /*rows=*/80, /*persistent=*/true,
                              /*programs=*/40, /*tensor_maps=*/true);
}

} // namespace
