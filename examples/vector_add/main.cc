// vector_add: launches the Triton kernel in add.py, compiled ahead of time by
// Kiln, checks it against the CPU and measures its bandwidth.
//
//   vector_add [--sizes=N,N,...] [--bench-n=N] [--bench-only]
//
// For fp32 and fp16, and each size (default 1, 1000, 2^20+3, 2^28), it fills
// x and y with fresh random numbers, poisons out with NaNs, launches
// out = x + y and compares with the CPU; once more with x one element past an
// aligned address, so that the launcher must take the general variant. Then it
// times n = 2^28 (--bench-n; 0 skips it) as triton.testing.do_bench times
// Triton's kernel, so that bench/vector_add.py compares like with like: random
// inputs, a warm-up, then per run a 256 MB fill that flushes the L2 (and keeps
// the GPU busy while the host launches), CUDA events around the launch; the
// median of 100 runs, as GB/s of 3 * n * element size bytes moved. The last
// lines read "RESULT <type> n=<n> GBps=<rate>".
//
// Exits 0 when every result is right, 1 when one is wrong or a call fails. On
// a machine without a GPU or driver it prints the kernel inventory and "no GPU
// found: <why>", and exits 0.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "examples/vector_add/add.h"  // generated: kernels::launch_add_kernel
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "kiln/testing/event_timer.h"

namespace {

struct Options {
  std::vector<int64_t> sizes = {1, 1000, (int64_t{1} << 20) + 3,
                                int64_t{1} << 28};
  int64_t bench_n = int64_t{1} << 28;
  bool check = true;
};

absl::StatusOr<int64_t> ParseSize(absl::string_view text) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < 0 || n > INT32_MAX) {
    return absl::InvalidArgumentError(
        "sizes must be integers in [0, 2^31): got '" + std::string(text) + "'");
  }
  return n;
}

absl::StatusOr<Options> ParseFlags(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--sizes=")) {
      options.sizes.clear();
      for (absl::string_view part : absl::StrSplit(arg, ',')) {
        absl::StatusOr<int64_t> n = ParseSize(part);
        if (!n.ok()) return n.status();
        options.sizes.push_back(*n);
      }
    } else if (absl::ConsumePrefix(&arg, "--bench-n=")) {
      absl::StatusOr<int64_t> n = ParseSize(arg);
      if (!n.ok()) return n.status();
      options.bench_n = *n;
    } else if (arg == "--bench-only") {
      options.check = false;
    } else {
      return absl::InvalidArgumentError(
          "unknown flag '" + std::string(arg) +
          "'; usage: vector_add [--sizes=N,N,...] [--bench-n=N] "
          "[--bench-only]");
    }
  }
  return options;
}

// xorshift64*: fast enough to fill 2^28 elements in about a second.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed | 1) {}
  // Uniform in [-1, 1).
  float Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const uint64_t bits = state_ * 0x2545f4914f6cdd1dull;
    return static_cast<float>(bits >> 40) * 0x1.0p-23f - 1.0f;
  }

 private:
  uint64_t state_;
};

// What differs between the element types.
template <typename T>
struct Element;

template <>
struct Element<float> {
  static constexpr const char* kName = "fp32";
  static constexpr int64_t kBlock = 1024;  // BLOCK of the fp32 variant
  static float Make(float value) { return value; }
  static float Value(float element) { return element; }
  // The GPU adds in fp32 as the CPU does: exact agreement.
  static bool Close(float got, float want) { return got == want; }
};

template <>
struct Element<kiln::half> {
  static constexpr const char* kName = "fp16";
  static constexpr int64_t kBlock = 2048;  // BLOCK of the fp16 variant
  static kiln::half Make(float value) { return kiln::half(value); }
  static float Value(kiln::half element) { return static_cast<float>(element); }
  // Within one fp16 rounding of the exact sum (NaN never is).
  static bool Close(float got, float want) {
    return std::fabs(got - want) <= 0x1.0p-11f * std::fabs(want) + 0x1.0p-24f;
  }
};

// Launches out = x + y for `n` elements, x starting `x_offset` elements into
// its buffer.
template <typename T>
absl::Status Add(kiln::DeviceBuffer& x, int64_t x_offset, kiln::DeviceBuffer& y,
                 kiln::DeviceBuffer& out, int64_t n) {
  return kernels::launch_add_kernel(
      kiln::Grid(static_cast<uint32_t>(kiln::cdiv(n, Element<T>::kBlock))),
      /*stream=*/nullptr, x.data<T>() + x_offset, y.data<T>(), out.data<T>(),
      static_cast<int32_t>(n));
}

// Checks out = x + y for `n` elements against the CPU; false on a mismatch.
template <typename T>
absl::StatusOr<bool> Check(int64_t n, int64_t x_offset, Random& random) {
  using E = Element<T>;
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  std::vector<T> x(n), y(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = E::Make(random.Next());
    y[i] = E::Make(random.Next());
  }
  absl::StatusOr<kiln::DeviceBuffer> dx =
      kiln::DeviceBuffer::Allocate(bytes + x_offset * sizeof(T));
  if (!dx.ok()) return dx.status();
  absl::StatusOr<kiln::DeviceBuffer> dy = kiln::DeviceBuffer::Allocate(bytes);
  if (!dy.ok()) return dy.status();
  absl::StatusOr<kiln::DeviceBuffer> dout = kiln::DeviceBuffer::Allocate(bytes);
  if (!dout.ok()) return dout.status();
  absl::Status status = dx->CopyFromHost(x.data(), bytes, x_offset * sizeof(T));
  if (status.ok()) status = dy->CopyFromHost(y.data(), bytes);
  if (status.ok()) status = dout->Fill(0xff);  // NaN in fp32 and fp16
  if (status.ok()) status = Add<T>(*dx, x_offset, *dy, *dout, n);
  if (status.ok()) status = kiln::SynchronizeStream(nullptr);
  if (status.ok()) status = dout->CopyToHost(out.data(), bytes);
  if (!status.ok()) return status;

  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float want = E::Value(E::Make(E::Value(x[i]) + E::Value(y[i])));
    const float got = E::Value(out[i]);
    if (!E::Close(got, want)) {
      if (wrong < 5) {
        std::printf(
            "  %s n=%lld: out[%lld] = %.9g, want %.9g (x %.9g + y %.9g)\n",
            E::kName, static_cast<long long>(n), static_cast<long long>(i), got,
            want, E::Value(x[i]), E::Value(y[i]));
      }
      ++wrong;
    }
  }
  const char* variant = x_offset != 0 ? "general"
                        : n % 16 == 0 ? "aligned"
                                      : "aligned-pointers";
  std::printf("check %s n=%lld%s (%s variant): %s\n", E::kName,
              static_cast<long long>(n), x_offset != 0 ? " x misaligned" : "",
              variant,
              wrong == 0 ? "ok" : (std::to_string(wrong) + " wrong").c_str());
  return wrong == 0;
}

// Times out = x + y for `n` elements; returns GB/s.
template <typename T>
absl::StatusOr<double> Bench(int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  absl::StatusOr<kiln::DeviceBuffer> x = kiln::DeviceBuffer::Allocate(bytes);
  if (!x.ok()) return x.status();
  absl::StatusOr<kiln::DeviceBuffer> y = kiln::DeviceBuffer::Allocate(bytes);
  if (!y.ok()) return y.status();
  absl::StatusOr<kiln::DeviceBuffer> out = kiln::DeviceBuffer::Allocate(bytes);
  if (!out.ok()) return out.status();
  // Random inputs, as torch.rand gives Triton's side.
  {
    using E = Element<T>;
    Random random(static_cast<uint64_t>(n));
    std::vector<T> host(static_cast<size_t>(n));
    for (T& v : host) v = E::Make(random.Next());
    absl::Status status = x->CopyFromHost(host.data(), bytes);
    if (status.ok()) status = y->CopyFromHost(host.data(), bytes);
    if (!status.ok()) return status;
  }
  absl::StatusOr<kiln::DeviceBuffer> flush =
      kiln::DeviceBuffer::Allocate(size_t{256} << 20);  // larger than the L2
  if (!flush.ok()) return flush.status();
  absl::StatusOr<kiln::EventTimer> timer = kiln::EventTimer::Create();
  if (!timer.ok()) return timer.status();

  absl::Status status;
  for (int i = 0; i < 5; ++i) {  // warm-up: module load, clocks, caches
    status = Add<T>(*x, 0, *y, *out, n);
    if (!status.ok()) return status;
  }
  std::vector<float> milliseconds;
  for (int i = 0; i < 100; ++i) {
    status = flush->Fill(static_cast<uint8_t>(i));
    if (status.ok()) status = timer->Start(nullptr);
    if (status.ok()) status = Add<T>(*x, 0, *y, *out, n);
    if (status.ok()) status = timer->Stop(nullptr);
    if (!status.ok()) return status;
    absl::StatusOr<float> ms = timer->ElapsedMilliseconds();
    if (!ms.ok()) return ms.status();
    milliseconds.push_back(*ms);
  }
  std::sort(milliseconds.begin(), milliseconds.end());
  const double median = milliseconds[milliseconds.size() / 2];
  return 3.0 * static_cast<double>(bytes) / (median * 1e-3) / 1e9;
}

template <typename T>
absl::StatusOr<bool> CheckAll(const Options& options, Random& random) {
  bool ok = true;
  for (int64_t n : options.sizes) {
    absl::StatusOr<bool> right = Check<T>(n, /*x_offset=*/0, random);
    if (!right.ok()) return right.status();
    ok = ok && *right;
  }
  // x one element past an aligned address: only the general variant applies.
  absl::StatusOr<bool> right =
      Check<T>(int64_t{1} << 20, /*x_offset=*/1, random);
  if (!right.ok()) return right.status();
  return ok && *right;
}

int Fail(const absl::Status& status) {
  std::printf("error: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<Options> options = ParseFlags(argc, argv);
  if (!options.ok()) return Fail(options.status());

  std::printf("%s", kiln::DescribeKernel(kernels::add_kernel_info()).c_str());
  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  if (!device.ok()) {
    std::printf("no GPU found: %s\n", device.status().ToString().c_str());
    return 0;
  }
  std::printf("device: %s (%s, %d SMs), CUDA driver %d.%d\n",
              device->name.c_str(), device->arch().c_str(),
              device->multiprocessors, device->driver_version / 1000,
              device->driver_version % 1000 / 10);

  bool ok = true;
  if (options->check) {
    Random random(0x4b494c4e);  // fresh numbers for every check
    absl::StatusOr<bool> fp32 = CheckAll<float>(*options, random);
    if (!fp32.ok()) return Fail(fp32.status());
    absl::StatusOr<bool> fp16 = CheckAll<kiln::half>(*options, random);
    if (!fp16.ok()) return Fail(fp16.status());
    ok = *fp32 && *fp16;
  }
  if (options->bench_n > 0) {
    absl::StatusOr<double> fp32 = Bench<float>(options->bench_n);
    if (!fp32.ok()) return Fail(fp32.status());
    absl::StatusOr<double> fp16 = Bench<kiln::half>(options->bench_n);
    if (!fp16.ok()) return Fail(fp16.status());
    std::printf("RESULT fp32 n=%lld GBps=%.1f\n",
                static_cast<long long>(options->bench_n), *fp32);
    std::printf("RESULT fp16 n=%lld GBps=%.1f\n",
                static_cast<long long>(options->bench_n), *fp16);
  }
  if (!ok) {
    std::printf("FAILED: wrong results\n");
    return 1;
  }
  return 0;
}
