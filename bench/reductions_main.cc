// Softmax (fp32), layer norm (fp16) and a tiled transpose (fp32, fp16)
// through Kiln's generated launchers:
// checks every row against a CPU reference, then times each configuration
// the way triton.testing.do_bench does (L2 flushed before each run, CUDA
// events around the kernel, median of the runs), so that bench/reductions.py
// can put the figures beside upstream Triton's.
//
// Prints one line per configuration:
//   RESULT softmax M=4096 N=16384 GBps=... ms=...
//   RESULT layernorm M=4096 N=8192 GBps=... ms=...
//   RESULT transpose_fp32 M=8192 N=8192 GBps=... ms=...
//   RESULT matmul_fp16 M=4096 N=4096 TFLOPS=... ms=...
// Without a GPU it prints the kernels' inventory and exits 0.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/layernorm_1024.h"
#include "bench/layernorm_4096.h"
#include "bench/layernorm_8192.h"
#include "bench/matmul_fp16.h"
#include "bench/transpose_fp16.h"
#include "bench/transpose_fp32.h"
#include "bench/softmax_1024.h"
#include "bench/softmax_16384.h"
#include "bench/softmax_4096.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "kiln/testing/event_timer.h"

namespace {

constexpr int kRows = 4096;
constexpr int kTimedRuns = 20;
constexpr size_t kFlushBytes = size_t{256} << 20;  // larger than the L2

#define RETURN_IF_ERROR(expr)             \
  do {                                    \
    absl::Status status_ = (expr);        \
    if (!status_.ok()) return status_;    \
  } while (0)

// Times `launch` as do_bench does: flush L2, then events around one launch;
// the median of kTimedRuns after a warm-up.
template <typename Launch>
absl::StatusOr<double> MedianMilliseconds(kiln::DeviceBuffer& flush,
                                          Launch launch) {
  RETURN_IF_ERROR(launch());
  RETURN_IF_ERROR(kiln::SynchronizeStream(nullptr));
  absl::StatusOr<kiln::EventTimer> timer = kiln::EventTimer::Create();
  if (!timer.ok()) return timer.status();
  std::vector<double> times;
  for (int i = 0; i < kTimedRuns; ++i) {
    RETURN_IF_ERROR(flush.Fill(static_cast<uint8_t>(i)));
    RETURN_IF_ERROR(timer->Start(nullptr));
    RETURN_IF_ERROR(launch());
    RETURN_IF_ERROR(timer->Stop(nullptr));
    absl::StatusOr<float> ms = timer->ElapsedMilliseconds();
    if (!ms.ok()) return ms.status();
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// `launch(grid, stream, args...)` calls one generated launcher.
template <typename Launcher>
absl::Status RunSoftmax(kiln::DeviceBuffer& flush, int n_cols,
                        Launcher launch, std::mt19937& rng) {
  const size_t count = size_t{kRows} * n_cols;
  std::vector<float> input(count), output(count);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (float& v : input) v = dist(rng);
  absl::StatusOr<kiln::DeviceBuffer> in =
      kiln::DeviceBuffer::Allocate(count * sizeof(float));
  if (!in.ok()) return in.status();
  absl::StatusOr<kiln::DeviceBuffer> out =
      kiln::DeviceBuffer::Allocate(count * sizeof(float));
  if (!out.ok()) return out.status();
  RETURN_IF_ERROR(in->CopyFromHost(input.data(), count * sizeof(float)));
  RETURN_IF_ERROR(out->Fill(0xff));  // NaN: unwritten outputs fail the check
  auto run = [&] {
    return launch(kiln::Grid(kRows), nullptr, out->data<float>(),
                  in->data<float>(), n_cols, n_cols, n_cols);
  };
  RETURN_IF_ERROR(run());
  RETURN_IF_ERROR(kiln::SynchronizeStream(nullptr));
  RETURN_IF_ERROR(out->CopyToHost(output.data(), count * sizeof(float)));
  double worst = 0;
  for (int r = 0; r < kRows; ++r) {
    const float* x = &input[static_cast<size_t>(r) * n_cols];
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < n_cols; ++c) max = std::max<double>(max, x[c]);
    for (int c = 0; c < n_cols; ++c) sum += std::exp(x[c] - max);
    for (int c = 0; c < n_cols; ++c) {
      double expected = std::exp(x[c] - max) / sum;
      double got = output[static_cast<size_t>(r) * n_cols + c];
      double error = std::fabs(got - expected) / (1e-6 + std::fabs(expected));
      if (!(error <= 1e-4)) {
        return absl::InternalError(
            "softmax N=" + std::to_string(n_cols) + " row " +
            std::to_string(r) + " col " + std::to_string(c) + ": got " +
            std::to_string(got) + ", expected " + std::to_string(expected));
      }
      worst = std::max(worst, error);
    }
  }
  std::printf("check softmax M=%d N=%d: ok (max relative error %.2e)\n",
              kRows, n_cols, worst);
  absl::StatusOr<double> ms = MedianMilliseconds(flush, run);
  if (!ms.ok()) return ms.status();
  std::printf("RESULT softmax M=%d N=%d GBps=%.1f ms=%.5f\n", kRows, n_cols,
              8.0 * count / (*ms * 1e-3) / 1e9, *ms);
  return absl::OkStatus();
}

template <typename Launcher>
absl::Status RunLayerNorm(kiln::DeviceBuffer& flush, int n_cols,
                          Launcher launch, std::mt19937& rng) {
  const size_t count = size_t{kRows} * n_cols;
  std::vector<kiln::half> x(count), y(count), w(n_cols), b(n_cols);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (kiln::half& v : x) v = kiln::half(normal(rng));
  for (kiln::half& v : w) v = kiln::half(unit(rng));
  for (kiln::half& v : b) v = kiln::half(unit(rng));
  const float eps = 1e-5f;
  std::vector<absl::StatusOr<kiln::DeviceBuffer>> buffers;
  for (size_t bytes : {count * 2, count * 2, size_t(n_cols) * 2,
                       size_t(n_cols) * 2}) {
    buffers.push_back(kiln::DeviceBuffer::Allocate(bytes));
    if (!buffers.back().ok()) return buffers.back().status();
  }
  kiln::DeviceBuffer &dx = *buffers[0], &dy = *buffers[1], &dw = *buffers[2],
                     &db = *buffers[3];
  RETURN_IF_ERROR(dx.CopyFromHost(x.data(), count * 2));
  RETURN_IF_ERROR(dw.CopyFromHost(w.data(), n_cols * 2));
  RETURN_IF_ERROR(db.CopyFromHost(b.data(), n_cols * 2));
  RETURN_IF_ERROR(dy.Fill(0xff));
  auto run = [&] {
    return launch(kiln::Grid(kRows), nullptr, dx.data<kiln::half>(),
                  dy.data<kiln::half>(), dw.data<kiln::half>(),
                  db.data<kiln::half>(), n_cols, n_cols, eps);
  };
  RETURN_IF_ERROR(run());
  RETURN_IF_ERROR(kiln::SynchronizeStream(nullptr));
  RETURN_IF_ERROR(dy.CopyToHost(y.data(), count * 2));
  double worst = 0;
  for (int r = 0; r < kRows; ++r) {
    const kiln::half* row = &x[static_cast<size_t>(r) * n_cols];
    double mean = 0, var = 0;
    for (int c = 0; c < n_cols; ++c) mean += static_cast<float>(row[c]);
    mean /= n_cols;
    for (int c = 0; c < n_cols; ++c) {
      double d = static_cast<float>(row[c]) - mean;
      var += d * d;
    }
    double rstd = 1.0 / std::sqrt(var / n_cols + eps);
    for (int c = 0; c < n_cols; ++c) {
      double expected = (static_cast<float>(row[c]) - mean) * rstd *
                            static_cast<float>(w[c]) +
                        static_cast<float>(b[c]);
      double got = static_cast<float>(y[static_cast<size_t>(r) * n_cols + c]);
      double error = std::fabs(got - expected);
      if (!(error <= 1e-2)) {
        return absl::InternalError(
            "layernorm N=" + std::to_string(n_cols) + " row " +
            std::to_string(r) + " col " + std::to_string(c) + ": got " +
            std::to_string(got) + ", expected " + std::to_string(expected));
      }
      worst = std::max(worst, error);
    }
  }
  std::printf("check layernorm M=%d N=%d: ok (max absolute error %.2e)\n",
              kRows, n_cols, worst);
  absl::StatusOr<double> ms = MedianMilliseconds(flush, run);
  if (!ms.ok()) return ms.status();
  std::printf("RESULT layernorm M=%d N=%d GBps=%.1f ms=%.5f\n", kRows, n_cols,
              4.0 * count / (*ms * 1e-3) / 1e9, *ms);
  return absl::OkStatus();
}

// y = x^T for an 8192 x 8192 x of `T`, in 64 x 64 tiles; checks every
// element, then times as above. GB/s counts a read and a write per element.
template <typename T, typename Launcher>
absl::Status RunTranspose(kiln::DeviceBuffer& flush, const char* name,
                          Launcher launch, std::mt19937& rng) {
  constexpr int kSize = 8192, kBlock = 64;
  const size_t count = size_t{kSize} * kSize;
  std::vector<T> input(count), output(count);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (T& v : input) v = T(dist(rng));
  absl::StatusOr<kiln::DeviceBuffer> in =
      kiln::DeviceBuffer::Allocate(count * sizeof(T));
  if (!in.ok()) return in.status();
  absl::StatusOr<kiln::DeviceBuffer> out =
      kiln::DeviceBuffer::Allocate(count * sizeof(T));
  if (!out.ok()) return out.status();
  RETURN_IF_ERROR(in->CopyFromHost(input.data(), count * sizeof(T)));
  RETURN_IF_ERROR(out->Fill(0xff));
  auto run = [&] {
    return launch(kiln::Grid(kSize / kBlock, kSize / kBlock), nullptr,
                  in->data<T>(), out->data<T>(), kSize, kSize);
  };
  RETURN_IF_ERROR(run());
  RETURN_IF_ERROR(kiln::SynchronizeStream(nullptr));
  RETURN_IF_ERROR(out->CopyToHost(output.data(), count * sizeof(T)));
  for (size_t r = 0; r < kSize; ++r) {
    for (size_t c = 0; c < kSize; ++c) {
      if (std::memcmp(&output[c * kSize + r], &input[r * kSize + c],
                      sizeof(T)) != 0) {
        return absl::InternalError(std::string(name) + ": y[" +
                                   std::to_string(c) + "][" +
                                   std::to_string(r) + "] is not x[" +
                                   std::to_string(r) + "][" +
                                   std::to_string(c) + "]");
      }
    }
  }
  std::printf("check %s M=%d N=%d: ok (bitwise)\n", name, kSize, kSize);
  absl::StatusOr<double> ms = MedianMilliseconds(flush, run);
  if (!ms.ok()) return ms.status();
  std::printf("RESULT %s M=%d N=%d GBps=%.1f ms=%.5f\n", name, kSize, kSize,
              2.0 * sizeof(T) * count / (*ms * 1e-3) / 1e9, *ms);
  return absl::OkStatus();
}

// C = A B for 4096 x 4096 fp16 matrices (the corpus's matmul tutorial,
// 128 x 128 x 32 tiles, 8 warps): checks 256 sampled elements against a
// double-precision reference, then times as above.
template <typename Launcher>
absl::Status RunMatmul(kiln::DeviceBuffer& flush, Launcher launch,
                       std::mt19937& rng) {
  constexpr int kSize = 4096, kBlock = 128;
  const size_t count = size_t{kSize} * kSize;
  std::vector<kiln::half> a(count), b(count), c(count);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (kiln::half& v : a) v = kiln::half(normal(rng));
  for (kiln::half& v : b) v = kiln::half(normal(rng));
  absl::StatusOr<kiln::DeviceBuffer> da =
      kiln::DeviceBuffer::Allocate(count * sizeof(kiln::half));
  if (!da.ok()) return da.status();
  absl::StatusOr<kiln::DeviceBuffer> db =
      kiln::DeviceBuffer::Allocate(count * sizeof(kiln::half));
  if (!db.ok()) return db.status();
  absl::StatusOr<kiln::DeviceBuffer> dc =
      kiln::DeviceBuffer::Allocate(count * sizeof(kiln::half));
  if (!dc.ok()) return dc.status();
  RETURN_IF_ERROR(da->CopyFromHost(a.data(), count * sizeof(kiln::half)));
  RETURN_IF_ERROR(db->CopyFromHost(b.data(), count * sizeof(kiln::half)));
  RETURN_IF_ERROR(dc->Fill(0xff));
  const int tiles = (kSize / kBlock) * (kSize / kBlock);
  auto run = [&] {
    return launch(kiln::Grid(tiles), nullptr, da->data<kiln::half>(),
                  db->data<kiln::half>(), dc->data<kiln::half>(), kSize, kSize,
                  kSize, kSize, 1, kSize, 1, kSize, 1);
  };
  RETURN_IF_ERROR(run());
  RETURN_IF_ERROR(kiln::SynchronizeStream(nullptr));
  RETURN_IF_ERROR(dc->CopyToHost(c.data(), count * sizeof(kiln::half)));
  std::uniform_int_distribution<int> index(0, kSize - 1);
  double worst = 0;
  for (int sample = 0; sample < 256; ++sample) {
    int i = index(rng), j = index(rng);
    double expected = 0;
    for (int k = 0; k < kSize; ++k)
      expected += double(float(a[size_t(i) * kSize + k])) *
                  double(float(b[size_t(k) * kSize + j]));
    double got = float(c[size_t(i) * kSize + j]);
    // fp16 output: one rounding (2^-11) of values up to about 4 sqrt(K).
    double error = std::fabs(got - expected) / 256.0;
    if (!(error <= 2e-3)) {
      return absl::InternalError(
          "matmul_fp16: C[" + std::to_string(i) + "][" + std::to_string(j) +
          "] is " + std::to_string(got) + ", expected " +
          std::to_string(expected));
    }
    worst = std::max(worst, error);
  }
  std::printf("check matmul_fp16 M=N=K=%d: ok (256 samples, max error %.2e "
              "of 256)\n",
              kSize, worst);
  absl::StatusOr<double> ms = MedianMilliseconds(flush, run);
  if (!ms.ok()) return ms.status();
  std::printf("RESULT matmul_fp16 M=%d N=%d TFLOPS=%.2f ms=%.5f\n", kSize,
              kSize, 2.0 * kSize * kSize * kSize / (*ms * 1e-3) / 1e12, *ms);
  return absl::OkStatus();
}

absl::Status RunAll() {
  absl::StatusOr<kiln::DeviceBuffer> flush =
      kiln::DeviceBuffer::Allocate(kFlushBytes);
  if (!flush.ok()) return flush.status();
  std::mt19937 rng(20261122);
// A generic lambda forwarding to one generated launcher.
#define LAUNCHER(fn) \
  [](kiln::Grid grid, CUstream stream, auto... args) { return fn(grid, stream, args...); }
  RETURN_IF_ERROR(RunSoftmax(
      *flush, 1024, LAUNCHER(bench::softmax_1024::launch_softmax_kernel), rng));
  RETURN_IF_ERROR(RunSoftmax(
      *flush, 4096, LAUNCHER(bench::softmax_4096::launch_softmax_kernel), rng));
  RETURN_IF_ERROR(RunSoftmax(
      *flush, 16384, LAUNCHER(bench::softmax_16384::launch_softmax_kernel),
      rng));
  RETURN_IF_ERROR(RunLayerNorm(
      *flush, 1024, LAUNCHER(bench::layernorm_1024::launch_layernorm_kernel),
      rng));
  RETURN_IF_ERROR(RunLayerNorm(
      *flush, 4096, LAUNCHER(bench::layernorm_4096::launch_layernorm_kernel),
      rng));
  RETURN_IF_ERROR(RunLayerNorm(
      *flush, 8192, LAUNCHER(bench::layernorm_8192::launch_layernorm_kernel),
      rng));
  RETURN_IF_ERROR(RunTranspose<float>(
      *flush, "transpose_fp32",
      LAUNCHER(bench::transpose_fp32::launch_transpose_kernel), rng));
  RETURN_IF_ERROR(RunTranspose<kiln::half>(
      *flush, "transpose_fp16",
      LAUNCHER(bench::transpose_fp16::launch_transpose_kernel), rng));
  RETURN_IF_ERROR(RunMatmul(
      *flush, LAUNCHER(bench::matmul_fp16::launch_matmul_kernel), rng));
#undef LAUNCHER
  return absl::OkStatus();
}

}  // namespace

int main() {
  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  if (!device.ok()) {
    std::printf("%s", kiln::DescribeKernel(
                          bench::softmax_16384::softmax_kernel_info())
                          .c_str());
    std::printf("%s", kiln::DescribeKernel(
                          bench::layernorm_8192::layernorm_kernel_info())
                          .c_str());
    std::printf("no GPU found: %s\n", device.status().ToString().c_str());
    return 0;
  }
  std::printf("device: %s (%s)\n", device->name.c_str(),
              device->arch().c_str());
  absl::Status status = RunAll();
  if (!status.ok()) {
    std::printf("FAILED: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
