// The generated API and the runtime on a real GPU, through kernels compiled by
// kilnc from examples/vector_add/add.py (tests/e2e/CMakeLists.txt and
// BUILD.bazel): configs chosen by the caller, grids as functions of the
// config, @triton.autotune configs as the variant list (tuned_saxpy.py), PTX
// for devices no cubin fits, the launch observer, introspection,
// 16 threads launching on 2 streams, and CUDA graph capture. Labelled `gpu`;
// every test skips, saying why, without a driver or GPU.

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "kiln/internal/launch.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"
#include "tests/e2e/add_configs.h"
#include "tests/e2e/add_ptx.h"
#include "tests/e2e/tuned_saxpy.h"
#include "tests/e2e/tuned_saxpy_tabled.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The driver entry points these tests need beyond the runtime's: streams and
// graphs. Resolved from libcuda.so.1 directly, so the runtime stays lean.
struct TestDriver {
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuStreamBeginCapture) stream_begin_capture = nullptr;
  decltype(&::cuStreamEndCapture) stream_end_capture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) graph_instantiate = nullptr;
  decltype(&::cuGraphLaunch) graph_launch = nullptr;
  decltype(&::cuGraphExecDestroy) graph_exec_destroy = nullptr;
  decltype(&::cuGraphDestroy) graph_destroy = nullptr;

  static const TestDriver &Get() {
    static const TestDriver *const driver = [] {
      auto *d = new TestDriver;
      void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr)
        return d;
      auto get = [&](const char *name, auto *slot) {
        *slot = reinterpret_cast<std::remove_reference_t<decltype(*slot)>>(
            dlsym(h, name));
      };
      get("cuStreamCreate", &d->stream_create);
      get("cuStreamDestroy_v2", &d->stream_destroy);
      get("cuStreamSynchronize", &d->stream_synchronize);
      get("cuStreamBeginCapture_v2", &d->stream_begin_capture);
      get("cuStreamEndCapture", &d->stream_end_capture);
      get("cuGraphInstantiateWithFlags", &d->graph_instantiate);
      get("cuGraphLaunch", &d->graph_launch);
      get("cuGraphExecDestroy", &d->graph_exec_destroy);
      get("cuGraphDestroy", &d->graph_destroy);
      return d;
    }();
    return *driver;
  }
};

class LaunchGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
    if (!device.ok()) {
      GTEST_SKIP() << "SKIPPED: no GPU or CUDA driver: " << device.status();
    }
    device_ = *device;
  }

  // Device buffers x, y, out of `n` floats (plus one spare, so that pointers
  // one element in are misaligned), x = i, y = 2i, out poisoned.
  struct Buffers {
    kiln::DeviceBuffer x, y, out;
    int64_t n;
  };
  static Buffers MakeBuffers(int64_t n) {
    Buffers b;
    b.n = n;
    std::vector<float> x(n + 1), y(n + 1);
    for (int64_t i = 0; i <= n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = static_cast<float>(2 * i);
    }
    const size_t bytes = (n + 1) * sizeof(float);
    b.x = *kiln::DeviceBuffer::Allocate(bytes);
    b.y = *kiln::DeviceBuffer::Allocate(bytes);
    b.out = *kiln::DeviceBuffer::Allocate(bytes);
    EXPECT_TRUE(b.x.CopyFromHost(x.data(), bytes).ok());
    EXPECT_TRUE(b.y.CopyFromHost(y.data(), bytes).ok());
    EXPECT_TRUE(b.out.Fill(0xff).ok());
    return b;
  }
  // Whether out[offset + i] == 3 * (offset + i) for i in [0, count).
  static bool Check(const Buffers &b, int64_t offset, int64_t count) {
    std::vector<float> out(b.n + 1);
    if (!b.out.CopyToHost(out.data(), out.size() * sizeof(float)).ok()) {
      return false;
    }
    for (int64_t i = offset; i < offset + count; ++i) {
      if (out[i] != 3.0f * i) {
        ADD_FAILURE() << "out[" << i << "] = " << out[i];
        return false;
      }
    }
    return true;
  }

  kiln::DeviceInfo device_;
};

// Records every launch the observer sees.
struct Seen {
  std::atomic<int> launches{0};
  std::atomic<const kiln::VariantInfo *> last_variant{nullptr};
  std::atomic<const kiln::CubinImage *> last_image{nullptr};
  std::atomic<uint32_t> last_grid_x{0};
};

void Record(const kiln::LaunchEvent &event, void *user_data) {
  Seen *seen = static_cast<Seen *>(user_data);
  seen->launches.fetch_add(1);
  seen->last_variant = event.variant;
  seen->last_image = event.image;
  seen->last_grid_x = event.grid.x;
}

// A const char* of the config's constexpr `name` in `variant`.
std::string ConstexprOf(const kiln::VariantInfo &variant, const char *name) {
  for (int i = 0; i < variant.num_constexprs; ++i) {
    if (std::strcmp(variant.constexprs[i].name, name) == 0) {
      return variant.constexprs[i].value;
    }
  }
  return "";
}

TEST_F(LaunchGpuTest, ConfigsAndGridFunctions) {
  Buffers b = MakeBuffers(10000);
  const int32_t n = static_cast<int32_t>(b.n);
  Seen seen;
  kiln::SetLaunchObserver(&Record, &seen);

  // The default config (the first specialization): BLOCK=1024.
  ASSERT_TRUE(e2e::configs::launch_add_kernel(
                  kiln::Grid(kiln::cdiv(n, 1024)), nullptr, b.x.data<float>(),
                  b.y.data<float>(), b.out.data<float>(), n)
                  .ok());
  ASSERT_TRUE(Check(b, 0, n));
  EXPECT_EQ(ConstexprOf(*seen.last_variant, "BLOCK"), "1024");

  // Another compiled config, with the grid computed from it.
  ASSERT_TRUE(b.out.Fill(0xff).ok());
  e2e::configs::add_kernel_config config;
  config.BLOCK = 256;
  config.num_warps = 2;
  int calls = 0;
  absl::Status status = e2e::configs::launch_add_kernel(
      config,
      [&](const e2e::configs::add_kernel_config &c) {
        ++calls;
        return kiln::Grid(kiln::cdiv(n, c.BLOCK));
      },
      nullptr, b.x.data<float>(), b.y.data<float>(), b.out.data<float>(), n);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(Check(b, 0, n));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.last_grid_x.load(), kiln::cdiv(n, 256));
  EXPECT_EQ(ConstexprOf(*seen.last_variant, "BLOCK"), "256");
  EXPECT_EQ(seen.last_variant.load()->num_warps, 2);

  // The default config's grid function sees the default.
  ASSERT_TRUE(e2e::configs::launch_add_kernel(
                  [&](const e2e::configs::add_kernel_config &c) {
                    EXPECT_EQ(c.BLOCK, 1024);
                    return kiln::Grid(kiln::cdiv(n, c.BLOCK));
                  },
                  nullptr, b.x.data<float>(), b.y.data<float>(),
                  b.out.data<float>(), n)
                  .ok());

  // A config compiled only for fp16 is refused for fp32, naming both.
  config.BLOCK = 2048;
  config.num_warps = 8;
  status = e2e::configs::launch_add_kernel(config, kiln::Grid(1), nullptr,
                                           b.x.data<float>(), b.y.data<float>(),
                                           b.out.data<float>(), n);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("compiled for them: (BLOCK=1024, num_warps=4, "
                        "num_stages=3), (BLOCK=256, num_warps=2"));
  EXPECT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  kiln::SetLaunchObserver(nullptr, nullptr);
  EXPECT_GE(seen.launches.load(), 3);
}

// tuned_saxpy's variants are its three @triton.autotune configs, each
// general, aligned-pointers and aligned; the first config is the default, and
// each runs when asked.
TEST_F(LaunchGpuTest, AutotuneConfigsAreTheVariants) {
  const kiln::KernelInfo &info = e2e::tuned::tuned_saxpy_info();
  ASSERT_EQ(info.num_variants, 9);
  std::vector<std::string> blocks;
  for (int v = 0; v < info.num_variants; ++v) {
    blocks.push_back(ConstexprOf(info.variants[v], "BLOCK") + "/" +
                     std::to_string(info.variants[v].num_warps) + "/" +
                     std::to_string(info.variants[v].num_stages));
  }
  EXPECT_THAT(blocks,
              ::testing::UnorderedElementsAre(
                  "1024/4/3", "1024/4/3", "1024/4/3", "256/2/3", "256/2/3",
                  "256/2/3", "4096/8/2", "4096/8/2", "4096/8/2"));

  Buffers b = MakeBuffers(20000);
  const int32_t n = static_cast<int32_t>(b.n);
  Seen seen;
  kiln::SetLaunchObserver(&Record, &seen);
  // The default config is the first: BLOCK=1024, 4 warps. alpha = 1 makes
  // out = 3i, as for add_kernel.
  ASSERT_TRUE(e2e::tuned::launch_tuned_saxpy(
                  [&](const e2e::tuned::tuned_saxpy_config &c) {
                    EXPECT_EQ(c.BLOCK, 1024);
                    return kiln::Grid(kiln::cdiv(n, c.BLOCK));
                  },
                  nullptr, b.x.data<float>(), b.y.data<float>(),
                  b.out.data<float>(), 1.0f, n)
                  .ok());
  ASSERT_TRUE(Check(b, 0, n));
  EXPECT_EQ(ConstexprOf(*seen.last_variant, "BLOCK"), "1024");

  for (auto [block, warps, stages] :
       {std::tuple{256, 2, 3}, std::tuple{4096, 8, 2}}) {
    ASSERT_TRUE(b.out.Fill(0xff).ok());
    e2e::tuned::tuned_saxpy_config config;
    config.BLOCK = block;
    config.num_warps = warps;
    config.num_stages = stages;
    absl::Status status = e2e::tuned::launch_tuned_saxpy(
        config,
        [&](const e2e::tuned::tuned_saxpy_config &c) {
          return kiln::Grid(kiln::cdiv(n, c.BLOCK));
        },
        nullptr, b.x.data<float>(), b.y.data<float>(), b.out.data<float>(),
        1.0f, n);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(Check(b, 0, n)) << "BLOCK=" << block;
    EXPECT_EQ(ConstexprOf(*seen.last_variant, "BLOCK"), std::to_string(block));
    EXPECT_EQ(seen.last_variant.load()->num_warps, warps);
    EXPECT_EQ(seen.last_grid_x.load(), kiln::cdiv(n, block));
  }

  // A config the decorator does not list is refused, listing those it does.
  e2e::tuned::tuned_saxpy_config missing;
  missing.BLOCK = 512;
  absl::Status status = e2e::tuned::launch_tuned_saxpy(
      missing, kiln::Grid(1), nullptr, b.x.data<float>(), b.y.data<float>(),
      b.out.data<float>(), 1.0f, n);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("(BLOCK=4096, num_warps=8, num_stages=2)"));
  kiln::SetLaunchObserver(nullptr, nullptr);
  EXPECT_TRUE(kiln::SynchronizeStream(nullptr).ok());
}

TEST_F(LaunchGpuTest, MisalignedArgumentsTakeTheGeneralVariant) {
  Buffers b = MakeBuffers(5000);
  Seen seen;
  kiln::SetLaunchObserver(&Record, &seen);
  const int32_t n = 4999;
  ASSERT_TRUE(e2e::configs::launch_add_kernel(kiln::Grid(kiln::cdiv(n, 1024)),
                                              nullptr, b.x.data<float>() + 1,
                                              b.y.data<float>() + 1,
                                              b.out.data<float>() + 1, n)
                  .ok());
  kiln::SetLaunchObserver(nullptr, nullptr);
  EXPECT_FALSE(seen.last_variant.load()->aligned);
  EXPECT_TRUE(Check(b, 1, n));
}

TEST_F(LaunchGpuTest, PtxRunsWhereNoCubinFits) {
  // add_ptx has only an sm_80 cubin and sm_80 PTX, both zstd-compressed: a
  // device of another major version must inflate and JIT the PTX, and an
  // Ampere device takes the cubin.
  const kiln::VariantInfo &variant = e2e::ptx::add_kernel_info().variants[0];
  for (int i = 0; i < variant.num_images; ++i)
    EXPECT_EQ(variant.images[i].compression, kiln::ImageCompression::kZstd);
  absl::StatusOr<const kiln::CubinImage *> image =
      kiln::ImageForCurrentDevice(variant);
  ASSERT_TRUE(image.ok()) << image.status();
  const bool expect_ptx = device_.compute_capability_major != 8;
  EXPECT_EQ((*image)->format == kiln::ImageFormat::kPtx, expect_ptx)
      << device_.arch() << " got " << (*image)->arch;

  Buffers b = MakeBuffers(3000);
  Seen seen;
  kiln::SetLaunchObserver(&Record, &seen);
  absl::Status status = e2e::ptx::launch_add_kernel(
      kiln::Grid(kiln::cdiv(b.n, 1024)), nullptr, b.x.data<float>(),
      b.y.data<float>(), b.out.data<float>(), static_cast<int32_t>(b.n));
  kiln::SetLaunchObserver(nullptr, nullptr);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(Check(b, 0, b.n));
  ASSERT_NE(seen.last_image.load(), nullptr);
  EXPECT_EQ(seen.last_image.load()->format == kiln::ImageFormat::kPtx,
            expect_ptx);
  std::printf("device %s ran add_ptx from the %s %s\n", device_.arch().c_str(),
              seen.last_image.load()->arch, expect_ptx ? "PTX (JIT)" : "cubin");
}

TEST_F(LaunchGpuTest, IntrospectionListsTheLinkedKernels) {
  std::vector<const kiln::KernelInfo *> kernels = kiln::RegisteredKernels();
  EXPECT_THAT(kernels,
              ::testing::IsSupersetOf({&e2e::configs::add_kernel_info(),
                                       &e2e::ptx::add_kernel_info()}));
  absl::StatusOr<const kiln::KernelInfo *> found =
      kiln::FindKernel("add_kernel");
  ASSERT_TRUE(found.ok());
  EXPECT_STREQ((*found)->name, "add_kernel");
  EXPECT_FALSE(kiln::FindKernel("no_such_kernel").ok());
  const kiln::KernelInfo &info = e2e::configs::add_kernel_info();
  for (int v = 0; v < info.num_variants; ++v) {
    absl::StatusOr<const kiln::CubinImage *> image =
        kiln::ImageForCurrentDevice(info.variants[v]);
    ASSERT_TRUE(image.ok()) << image.status();
    EXPECT_GT((*image)->registers, 0);
    EXPECT_GE((*image)->shared_bytes, 0);
  }
}

// 16 threads x 1000 launches, alternating aligned and misaligned arguments,
// on 2 streams: every result right, and each variant's module loaded once.
// Uses only the BLOCK=512 config, which no other test here launches.
TEST_F(LaunchGpuTest, SixteenThreadsTwoStreamsLoadEachModuleOnce) {
  const TestDriver &d = TestDriver::Get();
  ASSERT_NE(d.stream_create, nullptr);
  constexpr int kThreads = 16;
  constexpr int kLaunches = 1000;
  constexpr int64_t kSlice = 4096; // elements per thread
  Buffers b = MakeBuffers(kThreads * kSlice);
  CUstream streams[2];
  for (CUstream &stream : streams) {
    ASSERT_EQ(d.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  const int modules_before = kiln::internal::ModulesLoaded();
  Seen seen;
  kiln::SetLaunchObserver(&Record, &seen);
  e2e::configs::add_kernel_config config;
  config.BLOCK = 512;

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      CUstream stream = streams[t % 2];
      for (int i = 0; i < kLaunches; ++i) {
        // Odd launches start one element in: the general variant.
        const int64_t start = t * kSlice + (i % 2);
        const int32_t n = static_cast<int32_t>(kSlice - (i % 2));
        absl::Status status = e2e::configs::launch_add_kernel(
            config, kiln::Grid(kiln::cdiv(n, 512)), stream,
            b.x.data<float>() + start, b.y.data<float>() + start,
            b.out.data<float>() + start, n);
        if (!status.ok()) {
          if (failures.fetch_add(1) == 0)
            ADD_FAILURE() << status;
        }
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  kiln::SetLaunchObserver(nullptr, nullptr);
  for (CUstream stream : streams) {
    EXPECT_EQ(d.stream_synchronize(stream), CUDA_SUCCESS);
    d.stream_destroy(stream);
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(seen.launches.load(), kThreads * kLaunches);
  EXPECT_TRUE(Check(b, 0, kThreads * kSlice));
  // The aligned and the general variant of that config, once each.
  EXPECT_EQ(kiln::internal::ModulesLoaded() - modules_before, 2);
}

// Launches recorded into a CUDA graph and replayed, in global and thread-local
// capture modes. The first round's launch of the BLOCK=128 config (which no
// other test launches) loads its module inside the capture; the second
// round's is warm. The PTX kernel's launch is captured too.
TEST_F(LaunchGpuTest, LaunchesUnderGraphCapture) {
  const TestDriver &d = TestDriver::Get();
  ASSERT_NE(d.graph_instantiate, nullptr);
  Buffers b = MakeBuffers(8192);
  const int32_t n = static_cast<int32_t>(b.n);
  CUstream stream;
  ASSERT_EQ(d.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  e2e::configs::add_kernel_config config;
  config.BLOCK = 128;
  config.num_warps = 1;
  const int modules_before = kiln::internal::ModulesLoaded();
  for (CUstreamCaptureMode mode :
       {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL}) {
    ASSERT_TRUE(b.out.Fill(0xff).ok());
    ASSERT_EQ(d.stream_begin_capture(stream, mode), CUDA_SUCCESS);
    absl::Status first = e2e::configs::launch_add_kernel(
        config, kiln::Grid(kiln::cdiv(n / 2, 128)), stream, b.x.data<float>(),
        b.y.data<float>(), b.out.data<float>(), n / 2);
    absl::Status second = e2e::ptx::launch_add_kernel(
        kiln::Grid(kiln::cdiv(n / 2, 1024)), stream, b.x.data<float>() + n / 2,
        b.y.data<float>() + n / 2, b.out.data<float>() + n / 2, n / 2);
    CUgraph graph = nullptr;
    ASSERT_EQ(d.stream_end_capture(stream, &graph), CUDA_SUCCESS)
        << "mode " << mode;
    ASSERT_TRUE(first.ok()) << "mode " << mode << ": " << first;
    ASSERT_TRUE(second.ok()) << "mode " << mode << ": " << second;
    CUgraphExec exec = nullptr;
    ASSERT_EQ(d.graph_instantiate(&exec, graph, 0), CUDA_SUCCESS);
    // Nothing ran while capturing.
    std::vector<float> out(b.n);
    ASSERT_TRUE(b.out.CopyToHost(out.data(), out.size() * sizeof(float)).ok());
    EXPECT_NE(out[5], 15.0f);
    ASSERT_EQ(d.graph_launch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(d.stream_synchronize(stream), CUDA_SUCCESS);
    EXPECT_TRUE(Check(b, 0, n)) << "mode " << mode;
    d.graph_exec_destroy(exec);
    d.graph_destroy(graph);
  }
  // The BLOCK=128 config's aligned variant was loaded, once.
  EXPECT_GE(kiln::internal::ModulesLoaded() - modules_before, 1);
  d.stream_destroy(stream);
}

// tuned_saxpy_tabled embeds tuned_saxpy_h100.json (an H100, compute
// capability 9.0): BLOCK=256 for n=4096, BLOCK=4096 for n=2^20. On a 9.0
// device (H100, or H200 through the same compute capability) the default
// overload with a grid function runs the table's config; a fixed grid, or
// another device, runs the first config.
constexpr char kSaxpyTypes[] = "*fp32, *fp32, *fp32, fp32, i32";

TEST_F(LaunchGpuTest, TunedLaunchRunsTheTablesConfig) {
  const kiln::KernelInfo &info = e2e::tabled::tuned_saxpy_info();
  const bool covered = device_.compute_capability_major == 9 &&
                       device_.compute_capability_minor == 0;
  Seen seen;
  kiln::SetLaunchObserver(&Record, &seen);
  for (auto [count, block] :
       {std::pair{4096, 256}, std::pair{1 << 20, 4096}, std::pair{3000, 256}}) {
    Buffers b = MakeBuffers(count);
    const int32_t n = static_cast<int32_t>(b.n);
    absl::StatusOr<kiln::ConfigChoice> choice =
        kiln::ExplainTunedConfig(info, kSaxpyTypes, {n});
    ASSERT_TRUE(choice.ok()) << choice.status();
    int expected = covered ? block : 1024;
    EXPECT_THAT(choice->config, HasSubstr("BLOCK=" + std::to_string(expected)))
        << choice->reason;
    if (covered) {
      EXPECT_THAT(choice->reason, HasSubstr("tests/e2e/tuned_saxpy_h100.json"));
    }
    absl::Status status = e2e::tabled::launch_tuned_saxpy(
        [&](const e2e::tabled::tuned_saxpy_config &c) {
          return kiln::Grid(kiln::cdiv(n, c.BLOCK));
        },
        nullptr, b.x.data<float>(), b.y.data<float>(), b.out.data<float>(),
        1.0f, n);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(Check(b, 0, n)) << "n=" << n;
    EXPECT_EQ(ConstexprOf(*seen.last_variant, "BLOCK"),
              std::to_string(expected))
        << "n=" << n << ": " << choice->reason;

    // Fixed extents were computed for the default config: it runs.
    ASSERT_TRUE(b.out.Fill(0xff).ok());
    status = e2e::tabled::launch_tuned_saxpy(
        kiln::Grid(kiln::cdiv(n, 1024)), nullptr, b.x.data<float>(),
        b.y.data<float>(), b.out.data<float>(), 1.0f, n);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(Check(b, 0, n));
    EXPECT_EQ(ConstexprOf(*seen.last_variant, "BLOCK"), "1024");
  }
  kiln::SetLaunchObserver(nullptr, nullptr);
}

// Run-time tuning of a key the table lacks: measured once, on the caller's
// arguments (saxpy rewrites its output, so the result stays right), then
// cached and exported; never inside a graph capture.
TEST_F(LaunchGpuTest, RuntimeTuningMeasuresOnceAndExports) {
  const kiln::KernelInfo &info = e2e::tabled::tuned_saxpy_info();
  kiln::SetRuntimeTuning(info, kiln::RuntimeTuning::kUntuned);
  Buffers b = MakeBuffers(123457);
  const int32_t n = static_cast<int32_t>(b.n);
  auto grid = [&](const e2e::tabled::tuned_saxpy_config &c) {
    return kiln::Grid(kiln::cdiv(n, c.BLOCK));
  };

  // Inside a capture: no measurement, and the launch is captured.
  const TestDriver &d = TestDriver::Get();
  CUstream stream;
  ASSERT_EQ(d.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(d.stream_begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  absl::Status captured = e2e::tabled::launch_tuned_saxpy(
      grid, stream, b.x.data<float>(), b.y.data<float>(), b.out.data<float>(),
      1.0f, n);
  CUgraph graph = nullptr;
  ASSERT_EQ(d.stream_end_capture(stream, &graph), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured;
  d.graph_destroy(graph);
  d.stream_destroy(stream);
  absl::StatusOr<kiln::ConfigChoice> before =
      kiln::ExplainTunedConfig(info, kSaxpyTypes, {n});
  ASSERT_TRUE(before.ok());
  EXPECT_THAT(before->reason, Not(HasSubstr("run-time tuning")));

  absl::Status status = e2e::tabled::launch_tuned_saxpy(
      grid, nullptr, b.x.data<float>(), b.y.data<float>(), b.out.data<float>(),
      1.0f, n);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(kiln::SynchronizeStream(nullptr).ok());
  ASSERT_TRUE(Check(b, 0, n));
  absl::StatusOr<kiln::ConfigChoice> after =
      kiln::ExplainTunedConfig(info, kSaxpyTypes, {n});
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(after->reason, HasSubstr("measured by run-time tuning"));

  absl::StatusOr<kiln::TuningTable> table = kiln::RuntimeTuningTable();
  ASSERT_TRUE(table.ok()) << table.status();
  std::string text = kiln::WriteTuningTable(*table);
  EXPECT_THAT(text, HasSubstr("\"key\": [123457]"));
  EXPECT_TRUE(kiln::ParseTuningTable(text, "exported").ok());
  kiln::SetRuntimeTuning(info, kiln::RuntimeTuning::kOff);
}

} // namespace
