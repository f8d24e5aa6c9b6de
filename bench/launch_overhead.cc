// launch_overhead: the host cost of one launch through a generated launcher
// against a raw cuLaunchKernel of the same cubin, in the same process.
//
//   launch_overhead [--rounds=N] [--batch=N]
//
// The kernel is examples/vector_add's add_kernel (fp32, BLOCK=1024) on one
// element, so that the GPU never holds the host back for long. A misaligned
// pointer makes every launch take the general variant; the raw launch loads
// that variant's cubin for this device itself. Rounds interleave the ways of
// launching (raw, the generated launcher with the default config, with an
// explicit config, with a grid function of the config, and with a launch
// observer set), each a batch of launches timed with a steady clock and
// followed by a synchronize; the figure is the median over rounds of the time
// per launch. Prints one line per way and a summary line:
//
//   RESULT launch_overhead raw_us=2.10 kiln_us=2.22 ratio=1.057 ...
//
// Exits 1 without a GPU, or when a launch fails.

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "examples/vector_add/add.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"

namespace {

using Clock = std::chrono::steady_clock;

void CountLaunch(const kiln::LaunchEvent&, void* count) {
  ++*static_cast<int64_t*>(count);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 41;
  int batch = 500;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--rounds=") && absl::SimpleAtoi(arg, &rounds) &&
        rounds > 0) {
      continue;
    }
    arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--batch=") && absl::SimpleAtoi(arg, &batch) &&
        batch > 0) {
      continue;
    }
    std::fprintf(stderr, "usage: launch_overhead [--rounds=N] [--batch=N]\n");
    return 2;
  }

  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  if (!device.ok()) {
    std::printf("no GPU found: %s\n", device.status().ToString().c_str());
    return 1;
  }
  const kiln::internal::CudaDriver& d = **kiln::internal::GetCudaDriver();

  // The general fp32 variant and its cubin for this device, loaded by hand.
  const kiln::KernelInfo& info = kernels::add_kernel_info();
  const kiln::VariantInfo* general = nullptr;
  for (int v = 0; v < info.num_variants; ++v) {
    if (!info.variants[v].aligned &&
        std::string(info.variants[v].params[0].type) == "*fp32") {
      general = &info.variants[v];
    }
  }
  absl::StatusOr<const kiln::CubinImage*> image =
      kiln::ImageForCurrentDevice(*general);
  if (general == nullptr || !image.ok()) {
    std::printf("no fp32 general variant for this device\n");
    return 1;
  }
  CUmodule module;
  CUfunction function;
  if (d.module_load_data(&module, (*image)->data) != CUDA_SUCCESS ||
      d.module_get_function(&function, module, general->entry) !=
          CUDA_SUCCESS) {
    std::printf("cannot load the %s cubin\n", (*image)->arch);
    return 1;
  }

  absl::StatusOr<kiln::DeviceBuffer> buffer =
      kiln::DeviceBuffer::Allocate(64 * sizeof(float));
  if (!buffer.ok()) return 1;
  float* p = buffer->data<float>() + 1;  // misaligned: the general variant
  int32_t n = 1;
  const unsigned threads = 32 * general->num_warps;
  kernels::add_kernel_config config;  // the fp32 default, given explicitly
  int64_t observed = 0;
  bool failed = false;

  struct Way {
    const char* name;
    std::function<bool()> launch;
    std::vector<double> us;
  };
  std::vector<Way> ways = {
      {"raw",
       [&] {
         void* args[] = {&p, &p, &p, &n};
         return d.launch_kernel(function, 1, 1, 1, threads, 1, 1, 0, nullptr,
                                args, nullptr) == CUDA_SUCCESS;
       }},
      {"kiln",
       [&] {
         return kernels::launch_add_kernel(kiln::Grid(1), nullptr, p, p, p, n)
             .ok();
       }},
      {"kiln_config",
       [&] {
         return kernels::launch_add_kernel(config, kiln::Grid(1), nullptr, p,
                                           p, p, n)
             .ok();
       }},
      {"kiln_grid_fn",
       [&] {
         return kernels::launch_add_kernel(
                    [&](const kernels::add_kernel_config& c) {
                      return kiln::Grid(kiln::cdiv(n, c.BLOCK));
                    },
                    nullptr, p, p, p, n)
             .ok();
       }},
      {"kiln_observed",
       [&] {
         kiln::SetLaunchObserver(&CountLaunch, &observed);
         return kernels::launch_add_kernel(kiln::Grid(1), nullptr, p, p, p, n)
             .ok();
       }},
  };

  for (int round = 0; round < rounds + 1; ++round) {  // round 0 warms up
    for (Way& way : ways) {
      const bool observe = std::string(way.name) == "kiln_observed";
      if (observe) way.launch();  // sets the observer outside the timing
      const Clock::time_point start = Clock::now();
      for (int i = 0; i < batch; ++i) failed |= !way.launch();
      const double us =
          std::chrono::duration<double, std::micro>(Clock::now() - start)
              .count() /
          batch;
      if (observe) kiln::SetLaunchObserver(nullptr, nullptr);
      if (d.ctx_synchronize() != CUDA_SUCCESS) failed = true;
      if (round > 0) way.us.push_back(us);
    }
  }
  if (failed) {
    std::printf("a launch failed\n");
    return 1;
  }

  std::printf("device %s (%s), %d rounds of %d launches, cubin %s\n",
              device->name.c_str(), device->arch().c_str(), rounds, batch,
              (*image)->arch);
  std::string summary = "RESULT launch_overhead";
  double raw = 0;
  for (Way& way : ways) {
    std::sort(way.us.begin(), way.us.end());
    const double median = way.us[way.us.size() / 2];
    if (std::string(way.name) == "raw") raw = median;
    std::printf("%-14s median %.3f us/launch (min %.3f, max %.3f)  x%.3f\n",
                way.name, median, way.us.front(), way.us.back(), median / raw);
    char field[64];
    std::snprintf(field, sizeof(field), " %s_us=%.3f", way.name, median);
    summary += field;
    if (std::string(way.name) == "kiln") {
      std::snprintf(field, sizeof(field), " ratio=%.3f", median / raw);
      summary += field;
    }
  }
  std::printf("observer saw %lld launches\n", static_cast<long long>(observed));
  std::printf("%s\n", summary.c_str());
  d.module_unload(module);
  return 0;
}
