// Tuned config choice (kiln/tuning.h) against a hand-built autotuned kernel
// and the fake driver: table lookup (exact, bucket, missing device), the
// per-(context, key) cache under many threads, run-time tuning, graph
// capture, the exported table, kiln::Benchmark's timing loop, and streams of
// another context than the current one.

#include "kiln/tuning.h"

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "fake_cuda_driver.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/mutex_lock.h"
#include "kiln/internal/tuning_cache.h"
#include "kiln/kernel_info.h"
#include "kiln/tuning_table.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using testing::FakeGpu;
using ::testing::HasSubstr;
using testing::MakeFakeCudaDriver;

constexpr char kTypes[] = "*fp32, *fp32, *fp32, fp32, i32";
constexpr char kH100[] = "NVIDIA H100 80GB HBM3";

// tuned_saxpy's three configs; a table for the H100 with results for
// n = 4096 (BLOCK=256 best) and n = 2^20 (BLOCK=4096 best).
const char *const kKey[] = {"n"};
const int kKeyParams[] = {4};
const char *const kConfigs[] = {"BLOCK=1024, num_warps=4, num_stages=3",
                                "BLOCK=256, num_warps=2, num_stages=3",
                                "BLOCK=4096, num_warps=8, num_stages=2"};
const int kOverloadConfigs[] = {0, 1, 2};
const TuningOverload kOverloads[] = {{kTypes, kOverloadConfigs, 3, nullptr}};
const int64_t kKeys[] = {4096, 1048576};
const int kRanking[] = {1, 0, 2, 0};
const float kMs[] = {0.0021f, 0.0023f, 0.0042f, 0.0045f};
const EmbeddedTuningResult kResults[] = {{kKeys, kRanking, kMs, 2},
                                         {kKeys + 1, kRanking + 2, kMs + 2, 2}};
const EmbeddedTuningTable kTables[] = {
    {"tuning/h100.json", kH100, 9, 0, 132, 13000, "0.1.0", 0, kResults, 2}};
internal::TuningCache tuning_cache;
const KernelTuningInfo kTuning = {
    kKey, kKeyParams, 1, kConfigs, 3, kOverloads, 1, kTables, 1, &tuning_cache};
const KernelInfo kKernel = {"tuned_saxpy", nullptr, 0, &kTuning};

TuningTarget Device(const std::string &name, int major, int minor) {
  TuningTarget t;
  t.name = name;
  t.compute_capability_major = major;
  t.compute_capability_minor = minor;
  return t;
}

ConfigChoice Select(int64_t n, const TuningTarget &device) {
  absl::StatusOr<ConfigChoice> choice =
      SelectTunedConfig(kKernel, kTypes, {n}, device);
  EXPECT_TRUE(choice.ok()) << choice.status();
  return choice.ok() ? *choice : ConfigChoice{};
}

TEST(SelectTunedConfig, ExactKey) {
  ConfigChoice c = Select(4096, Device(kH100, 9, 0));
  EXPECT_EQ(c.position, 1);
  EXPECT_EQ(c.config, "BLOCK=256, num_warps=2, num_stages=3");
  EXPECT_THAT(c.reason,
              AllOf(HasSubstr("tuning/h100.json (NVIDIA H100 80GB HBM3, 9.0)"),
                    HasSubstr("exact result for n=4096"),
                    HasSubstr("0.0021 ms, fastest of 2 measured")));
  EXPECT_EQ(Select(1048576, Device(kH100, 9, 0)).position, 2);
}

TEST(SelectTunedConfig, NearestBucket) {
  // 3000 rounds up to 4096: the same bucket as the n=4096 result.
  ConfigChoice same = Select(3000, Device(kH100, 9, 0));
  EXPECT_EQ(same.position, 1);
  EXPECT_THAT(same.reason,
              HasSubstr("no result for n=3000, nearest power-of-two bucket "
                        "n=4096 (same bucket)"));
  // 2^22 is two buckets above 2^20, far above 4096.
  ConfigChoice far = Select(int64_t{1} << 22, Device(kH100, 9, 0));
  EXPECT_EQ(far.position, 2);
  EXPECT_THAT(far.reason, HasSubstr("n=1048576 (2 bucket steps away)"));
}

TEST(SelectTunedConfig, MissingDeviceRunsTheFirstConfig) {
  ConfigChoice c = Select(4096, Device("NVIDIA A100-SXM4-80GB", 8, 0));
  EXPECT_EQ(c.position, 0);
  EXPECT_EQ(c.config, "BLOCK=1024, num_warps=4, num_stages=3");
  EXPECT_THAT(c.reason,
              HasSubstr("no tuning table for this device (NVIDIA "
                        "A100-SXM4-80GB, 8.0) and these types: the first "
                        "config, the default"));
}

TEST(SelectTunedConfig, SameComputeCapabilityOtherNameUsesTheTable) {
  ConfigChoice c = Select(4096, Device("NVIDIA H100 PCIe", 9, 0));
  EXPECT_EQ(c.position, 1);
  EXPECT_THAT(c.reason, HasSubstr("another device of this compute capability"));
}

TEST(SelectTunedConfig, Errors) {
  absl::StatusOr<ConfigChoice> types =
      SelectTunedConfig(kKernel, "*fp16", {1}, Device(kH100, 9, 0));
  EXPECT_THAT(types.status().message(),
              HasSubstr("tuned_saxpy: no overload for types (*fp16); "
                        "compiled: (*fp32, *fp32, *fp32, fp32, i32)"));
  absl::StatusOr<ConfigChoice> key =
      SelectTunedConfig(kKernel, kTypes, {1, 2}, Device(kH100, 9, 0));
  EXPECT_THAT(key.status().message(),
              HasSubstr("expected 1 key values (n), got 2"));
  KernelInfo plain = {"plain", nullptr, 0};
  absl::StatusOr<ConfigChoice> untuned =
      SelectTunedConfig(plain, kTypes, {1}, Device(kH100, 9, 0));
  EXPECT_THAT(untuned.status().message(),
              HasSubstr("plain: not built with autotune"));
}

class TunedLaunchTest : public ::testing::Test {
protected:
  TunedLaunchTest() : driver_(MakeFakeCudaDriver(gpu_)) {
    gpu_.device_name = kH100;
    internal::ResetTuningCache(kKernel);
    SetRuntimeTuning(kKernel, RuntimeTuning::kOff);
  }
  ~TunedLaunchTest() override {
    SetRuntimeTuning(kKernel, RuntimeTuning::kOff);
  }

  // Chooses for `n`; a run() that costs costs_[position] fake milliseconds.
  int Choose(int64_t n, CUstream stream = nullptr) {
    return internal::TunedConfigPositionWith(
        driver_, kKernel, 0, &n, stream, [&](int position) {
          ++runs_;
          internal::MutexLock lock(&gpu_.mu);
          gpu_.clock_ms += costs_[position];
          return absl::OkStatus();
        });
  }

  FakeGpu gpu_;
  internal::CudaDriver driver_;
  std::atomic<int> runs_{0};
  double costs_[3] = {0.05, 0.03, 0.01};
};

TEST_F(TunedLaunchTest, ChoosesFromTheTableWithoutRunning) {
  EXPECT_EQ(Choose(4096), 1);
  EXPECT_EQ(Choose(1048576), 2);
  EXPECT_EQ(Choose(3000), 1);
  gpu_.cc_major = 8; // cached per context: still the H100's choice
  EXPECT_EQ(Choose(4096), 1);
  EXPECT_EQ(runs_, 0);
}

TEST_F(TunedLaunchTest, OtherDeviceGetsTheDefault) {
  gpu_.cc_major = 8;
  gpu_.device_name = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(Choose(4096), 0);
  EXPECT_EQ(Choose(1048576), 0);
}

TEST_F(TunedLaunchTest, ManyThreadsAgreeWithTheTable) {
  const std::vector<int64_t> keys = {4096, 1048576, 3000,   1 << 22, 1,
                                     777,  65536,   100000, 5000,    2048};
  std::vector<int> expected;
  for (int64_t n : keys)
    expected.push_back(Select(n, Device(kH100, 9, 0)).position);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 400; ++i) {
        size_t k = (i * 7 + t) % keys.size();
        if (Choose(keys[k]) != expected[k])
          ++wrong;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(runs_, 0);
}

TEST_F(TunedLaunchTest, RuntimeTuningMeasuresUntunedKeysOnce) {
  SetRuntimeTuning(kKernel, RuntimeTuning::kUntuned);
  // 12345 has no exact result: every config is timed, the fastest wins.
  EXPECT_EQ(Choose(12345), 2);
  int measured = runs_;
  EXPECT_GT(measured, 3);
  EXPECT_EQ(Choose(12345), 2); // cached
  EXPECT_EQ(runs_, measured);
  // An exact result is trusted in this mode.
  EXPECT_EQ(Choose(4096), 1);
  EXPECT_EQ(runs_, measured);

  // The measurement, as a table that parses back.
  TuningDevice device;
  device.name = kH100;
  device.compute_capability_major = 9;
  device.sm_count = 132;
  const KernelInfo *kernels[] = {&kKernel};
  TuningTable table = internal::MeasuredTuningTable(kernels, device);
  absl::StatusOr<TuningTable> parsed =
      ParseTuningTable(WriteTuningTable(table), "measured.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->kernels.size(), 1u);
  ASSERT_EQ(parsed->kernels[0].results.size(), 1u);
  const TuningResult &r = parsed->kernels[0].results[0];
  EXPECT_EQ(r.types, kTypes);
  EXPECT_EQ(r.key, std::vector<int64_t>{12345});
  ASSERT_EQ(r.ranking.size(), 3u);
  EXPECT_EQ(r.ranking[0].config, kConfigs[2]);
  EXPECT_EQ(r.ranking[1].config, kConfigs[1]);
  EXPECT_EQ(r.ranking[2].config, kConfigs[0]);
  EXPECT_NEAR(r.ranking[0].ms, 0.01, 1e-6);
  // Another device's measurements are not exported.
  device.name = "NVIDIA H200";
  EXPECT_TRUE(internal::MeasuredTuningTable(kernels, device).kernels.empty());
}

// Threads that make the first call for the same untuned key at once: one
// measures, the others wait for its result instead of measuring again.
TEST_F(TunedLaunchTest, ConcurrentFirstCallsMeasureOnce) {
  SetRuntimeTuning(kKernel, RuntimeTuning::kUntuned);
  EXPECT_EQ(Choose(12345), 2);
  const int one_measurement = runs_;
  ASSERT_GT(one_measurement, 3);
  internal::ResetTuningCache(kKernel);
  runs_ = 0;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (Choose(12345) != 2)
          ++wrong;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(runs_, one_measurement);
}

TEST_F(TunedLaunchTest, AlwaysModeMeasuresEvenTabledKeys) {
  SetRuntimeTuning(kKernel, RuntimeTuning::kAlways);
  EXPECT_EQ(Choose(4096), 2); // the fake costs disagree with the table
  EXPECT_GT(runs_, 0);
}

TEST_F(TunedLaunchTest, NoMeasurementWhileCapturing) {
  SetRuntimeTuning(kKernel, RuntimeTuning::kAlways);
  gpu_.capture_status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  EXPECT_EQ(Choose(4096), 1); // the table's choice
  EXPECT_EQ(runs_, 0);
  gpu_.capture_status = CU_STREAM_CAPTURE_STATUS_NONE;
  EXPECT_EQ(Choose(4096), 2); // not cached during the capture
  EXPECT_GT(runs_, 0);
}

TEST_F(TunedLaunchTest, FailingConfigsAreRejected) {
  SetRuntimeTuning(kKernel, RuntimeTuning::kAlways);
  int64_t n = 99;
  int position = internal::TunedConfigPositionWith(
      driver_, kKernel, 0, &n, nullptr, [&](int p) {
        if (p == 2)
          return absl::InvalidArgumentError("too big");
        internal::MutexLock lock(&gpu_.mu);
        gpu_.clock_ms += costs_[p];
        return absl::OkStatus();
      });
  EXPECT_EQ(position, 1);
  TuningDevice device;
  device.name = kH100;
  device.compute_capability_major = 9;
  device.sm_count = 1;
  const KernelInfo *kernels[] = {&kKernel};
  TuningTable table = internal::MeasuredTuningTable(kernels, device);
  ASSERT_EQ(table.kernels.size(), 1u);
  ASSERT_EQ(table.kernels[0].results[0].rejected.size(), 1u);
  EXPECT_THAT(table.kernels[0].results[0].rejected[0].reason,
              HasSubstr("too big"));
}

TEST_F(TunedLaunchTest, NoTablesAndNoTuningNeverTouchesTheDriver) {
  internal::TuningCache cache;
  KernelTuningInfo bare = kTuning;
  bare.tables = nullptr;
  bare.num_tables = 0;
  bare.cache = &cache;
  KernelInfo kernel = {"bare", nullptr, 0, &bare};
  gpu_.Fail("cuInit", CUDA_ERROR_NO_DEVICE);
  internal::CudaDriver empty; // every entry null: any call would crash
  int64_t n = 4096;
  EXPECT_EQ(
      internal::TunedConfigPositionWith(empty, kernel, 0, &n, nullptr,
                                        [](int) { return absl::OkStatus(); }),
      0);
}

TEST_F(TunedLaunchTest, BenchmarkTimesLikeDoBench) {
  BenchmarkOptions options;
  options.warmup_ms = 5;
  options.rep_ms = 10;
  int launches = 0;
  absl::StatusOr<BenchmarkTiming> timing = internal::BenchmarkWith(
      driver_, nullptr,
      [&] {
        ++launches;
        internal::MutexLock lock(&gpu_.mu);
        gpu_.clock_ms += 0.5;
        return absl::OkStatus();
      },
      options);
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_NEAR(timing->median_ms, 0.5, 1e-6);
  EXPECT_NEAR(timing->p20_ms, 0.5, 1e-6);
  EXPECT_EQ(timing->reps, 20);          // 10 ms / 0.5 ms
  EXPECT_EQ(launches, 1 + 5 + 10 + 20); // first, estimate, warm-up, timed
  EXPECT_EQ(gpu_.memsets, 5 + 20);      // an L2 flush before each timed one
  EXPECT_EQ(gpu_.live_allocations, 0);  // the flush buffer is freed
  EXPECT_TRUE(gpu_.events.empty());     // and every event destroyed
}

TEST_F(TunedLaunchTest, BenchmarkInterleavedTimesEachLaunchInTurn) {
  BenchmarkOptions options;
  options.warmup_ms = 5;
  options.rep_ms = 10;
  std::string order;
  auto advance = [&](char name, double ms) {
    order.push_back(name);
    internal::MutexLock lock(&gpu_.mu);
    gpu_.clock_ms += ms;
    return absl::OkStatus();
  };
  auto a = [&] { return advance('a', 0.5); };
  auto b = [&] { return advance('b', 0.25); };
  std::vector<absl::FunctionRef<absl::Status()>> launches = {a, b};
  absl::StatusOr<std::vector<BenchmarkTiming>> timings =
      internal::BenchmarkInterleavedWith(driver_, nullptr, launches, options);
  ASSERT_TRUE(timings.ok()) << timings.status();
  ASSERT_EQ(timings->size(), 2u);
  EXPECT_NEAR((*timings)[0].median_ms, 0.5, 1e-6);
  EXPECT_NEAR((*timings)[1].median_ms, 0.25, 1e-6);
  // rep_ms is per launch: 10 ms over the average 0.375 ms of one.
  EXPECT_EQ((*timings)[0].reps, 26);
  EXPECT_EQ((*timings)[1].reps, 26);
  // Each once, the estimate's five rounds, 13 warm-up rounds, then the
  // timed rounds with a different one first each time.
  ASSERT_EQ(order.size(), 2u * (1 + 5 + 13 + 26));
  std::string timed = order.substr(2 * (1 + 5 + 13));
  EXPECT_EQ(timed.substr(0, 8), "abbaabba");
  EXPECT_EQ(gpu_.memsets, 2 * (5 + 26));
  EXPECT_EQ(gpu_.live_allocations, 0);
  EXPECT_TRUE(gpu_.events.empty());
}

TEST_F(TunedLaunchTest, BenchmarkInterleavedReturnsTheFirstLaunchError) {
  auto fine = [] { return absl::OkStatus(); };
  auto broken = [] { return absl::InternalError("boom"); };
  std::vector<absl::FunctionRef<absl::Status()>> launches = {fine, broken};
  absl::StatusOr<std::vector<BenchmarkTiming>> timings =
      internal::BenchmarkInterleavedWith(driver_, nullptr, launches, {});
  EXPECT_THAT(timings.status().message(), HasSubstr("boom"));
  EXPECT_EQ(gpu_.live_allocations, 0);
}

TEST_F(TunedLaunchTest, BenchmarkReturnsTheLaunchError) {
  absl::StatusOr<BenchmarkTiming> timing = internal::BenchmarkWith(
      driver_, nullptr, [] { return absl::InternalError("boom"); }, {});
  EXPECT_THAT(timing.status().message(), HasSubstr("boom"));
  EXPECT_EQ(gpu_.live_allocations, 0);
}

// Streams of two contexts: A, current, on device 0 (the H100 the table is
// for), and B on device 1, an A100, as when a program's stream was made on
// another GPU than the thread's current one.
const CUcontext kContextA = reinterpret_cast<CUcontext>(0xa000);
const CUcontext kContextB = reinterpret_cast<CUcontext>(0xb000);
const CUstream kStreamA = reinterpret_cast<CUstream>(0x5a00);
const CUstream kStreamB = reinterpret_cast<CUstream>(0x5b00);

class OtherContextStreamTest : public TunedLaunchTest {
protected:
  OtherContextStreamTest() {
    gpu_.other_devices[1] = {"NVIDIA A100-SXM4-80GB", 8, 0};
    gpu_.context_devices[kContextB] = 1;
    gpu_.stream_contexts[kStreamA] = kContextA;
    gpu_.stream_contexts[kStreamB] = kContextB;
    gpu_.current = kContextA;
  }

  // The current context is the thread's again, nothing left pushed.
  void ExpectCurrentRestored() {
    EXPECT_EQ(gpu_.current, kContextA);
    EXPECT_TRUE(gpu_.context_stack.empty());
  }
};

TEST_F(OtherContextStreamTest, ChoosesForTheStreamsDevice) {
  EXPECT_EQ(Choose(4096, kStreamB), 0); // no table for the A100
  EXPECT_EQ(Choose(4096, kStreamA), 1); // the H100's table
  EXPECT_EQ(Choose(4096), 1);           // null stream: the current context
  EXPECT_EQ(Choose(4096, kStreamB), 0); // cached per the stream's context
  ExpectCurrentRestored();
}

TEST_F(OtherContextStreamTest, MeasuresInTheStreamsContext) {
  SetRuntimeTuning(kKernel, RuntimeTuning::kAlways);
  std::vector<CUcontext> run_contexts;
  int64_t n = 4096;
  int position = internal::TunedConfigPositionWith(
      driver_, kKernel, 0, &n, kStreamB, [&](int p) {
        internal::MutexLock lock(&gpu_.mu);
        run_contexts.push_back(gpu_.current);
        gpu_.clock_ms += costs_[p];
        return absl::OkStatus();
      });
  EXPECT_EQ(position, 2);
  EXPECT_FALSE(run_contexts.empty());
  EXPECT_THAT(run_contexts, Each(kContextB));
  // The L2 flush buffer and the timing events are the stream's context's.
  EXPECT_FALSE(gpu_.alloc_contexts.empty());
  EXPECT_THAT(gpu_.alloc_contexts, Each(kContextB));
  EXPECT_FALSE(gpu_.event_contexts.empty());
  EXPECT_THAT(gpu_.event_contexts, Each(kContextB));
  ExpectCurrentRestored();
  // The measurement is the A100's, not the current context's H100.
  TuningDevice a100;
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.compute_capability_major = 8;
  const KernelInfo *kernels[] = {&kKernel};
  EXPECT_EQ(internal::MeasuredTuningTable(kernels, a100).kernels.size(), 1u);
  TuningDevice h100;
  h100.name = kH100;
  h100.compute_capability_major = 9;
  EXPECT_TRUE(internal::MeasuredTuningTable(kernels, h100).kernels.empty());
}

TEST_F(OtherContextStreamTest, BenchmarkRunsInTheStreamsContext) {
  BenchmarkOptions options;
  options.warmup_ms = 1;
  options.rep_ms = 1;
  std::vector<CUcontext> launch_contexts;
  absl::StatusOr<BenchmarkTiming> timing = internal::BenchmarkWith(
      driver_, kStreamB,
      [&] {
        internal::MutexLock lock(&gpu_.mu);
        launch_contexts.push_back(gpu_.current);
        gpu_.clock_ms += 0.5;
        return absl::OkStatus();
      },
      options);
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_THAT(launch_contexts, Each(kContextB));
  EXPECT_FALSE(gpu_.alloc_contexts.empty());
  EXPECT_THAT(gpu_.alloc_contexts, Each(kContextB));
  EXPECT_FALSE(gpu_.event_contexts.empty());
  EXPECT_THAT(gpu_.event_contexts, Each(kContextB));
  ExpectCurrentRestored();
}

TEST_F(OtherContextStreamTest,
       BenchmarkReportsAContextThatCannotBeMadeCurrent) {
  gpu_.Fail("cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT);
  int launches = 0;
  absl::StatusOr<BenchmarkTiming> timing =
      internal::BenchmarkWith(driver_, kStreamB,
                              [&] {
                                ++launches;
                                return absl::OkStatus();
                              },
                              {});
  EXPECT_THAT(timing.status().message(),
              HasSubstr("cuCtxPushCurrent (the stream's context): "
                        "CUDA_ERROR_INVALID_CONTEXT"));
  EXPECT_EQ(launches, 0);
  EXPECT_TRUE(gpu_.alloc_contexts.empty());
  ExpectCurrentRestored();
}

} // namespace
} // namespace kiln
