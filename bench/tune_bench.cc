// The Kiln side of bench/tune_compare.py: for the autotuned matmul
// (kernels/matmul_autotuned.py) and layer norm (kernels/layernorm_autotuned.py)
// at each shape, times the generated launcher's default overload (which
// consults the embedded tuning table for this GPU, or, with
// --runtime-tuning, measures on its first call), the first config (what the
// launcher ran before tables) and every config through the config overload,
// with kiln::Benchmark (do_bench's method). One line per shape:
//
//   RESULT {"kernel": ..., "shape": ..., "default_ms": ..., "default_config":
//           ..., "why": ..., "first_ms": ..., "best_ms": ..., "best_config":
//           ..., "configs": {...}}
//
//   tune_bench [--runtime-tuning] [--quick]

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/tune_layernorm.h"
#include "bench/tune_matmul.h"
#include "kiln/internal/json.h"
#include "kiln/runtime.h"
#include "kiln/testing/device_buffer.h"

namespace {

using kiln::internal::JsonQuote;

struct Measured {
  std::string kernel;
  std::string shape;
  double default_ms = 0;
  std::string default_config, why;
  double first_ms = 0;
  double best_ms = 0;
  std::string best_config;
  std::vector<std::pair<std::string, double>> configs;
};

void Print(const Measured &m) {
  std::vector<std::string> configs;
  for (const auto &[name, ms] : m.configs) {
    configs.push_back(absl::StrFormat("%s: %.6g", JsonQuote(name), ms));
  }
  std::printf(
      "RESULT {\"kernel\": %s, \"shape\": %s, \"default_ms\": %.6g, "
      "\"default_config\": %s, \"why\": %s, \"first_ms\": %.6g, \"best_ms\": "
      "%.6g, \"best_config\": %s, \"configs\": {%s}}\n",
      JsonQuote(m.kernel).c_str(), JsonQuote(m.shape).c_str(), m.default_ms,
      JsonQuote(m.default_config).c_str(), JsonQuote(m.why).c_str(), m.first_ms,
      m.best_ms, JsonQuote(m.best_config).c_str(),
      absl::StrJoin(configs, ", ").c_str());
  std::fflush(stdout);
}

// Times every config of overload 0 of `kernel` with the type-erased
// launcher; `grid(config_index)` gives the extents.
template <typename GridOf>
absl::Status TimeConfigs(const kiln::KernelInfo &kernel,
                         const std::vector<const void *> &args, GridOf grid,
                         const kiln::BenchmarkOptions &options, Measured &m) {
  const kiln::KernelTuningInfo &tuning = *kernel.tuning;
  const kiln::TuningOverload &overload = tuning.overloads[0];
  m.best_ms = 0;
  for (int position = 0; position < overload.num_configs; ++position) {
    int config = overload.configs[position];
    kiln::Grid g = grid(config);
    absl::StatusOr<kiln::BenchmarkTiming> timing = kiln::Benchmark(
        nullptr,
        [&] { return overload.launch(position, g, nullptr, args.data()); },
        options);
    if (!timing.ok()) {
      std::fprintf(stderr, "%s %s config %s: %s\n", kernel.name,
                   m.shape.c_str(), tuning.configs[config],
                   timing.status().ToString().c_str());
      continue;
    }
    m.configs.emplace_back(tuning.configs[config], timing->median_ms);
    if (position == 0)
      m.first_ms = timing->median_ms;
    if (m.best_ms == 0 || timing->median_ms < m.best_ms) {
      m.best_ms = timing->median_ms;
      m.best_config = tuning.configs[config];
    }
  }
  return absl::OkStatus();
}

void Explain(const kiln::KernelInfo &kernel, std::vector<int64_t> key,
             Measured &m) {
  absl::StatusOr<kiln::ConfigChoice> choice =
      kiln::ExplainTunedConfig(kernel, kernel.tuning->overloads[0].types, key);
  if (choice.ok()) {
    m.default_config = choice->config;
    m.why = choice->reason;
  } else {
    m.why = choice.status().ToString();
  }
}

absl::Status Matmul(int64_t M, int64_t N, int64_t K,
                    const kiln::BenchmarkOptions &options) {
  namespace mm = bench::tuned_matmul;
  auto a = kiln::DeviceBuffer::Allocate(M * K * 2);
  auto b = kiln::DeviceBuffer::Allocate(K * N * 2);
  auto c = kiln::DeviceBuffer::Allocate(M * N * 2);
  if (!a.ok() || !b.ok() || !c.ok())
    return absl::ResourceExhaustedError("alloc");
  // Small values, so that fp16 neither overflows nor flushes.
  std::vector<kiln::half> host(std::max(M * K, K * N));
  for (size_t i = 0; i < host.size(); ++i) {
    host[i] = kiln::half(static_cast<float>((i * 7919) % 17) / 16 - 0.5f);
  }
  if (absl::Status s = a->CopyFromHost(host.data(), M * K * 2); !s.ok())
    return s;
  if (absl::Status s = b->CopyFromHost(host.data(), K * N * 2); !s.ok())
    return s;
  kiln::half *pa = a->data<kiln::half>();
  kiln::half *pb = b->data<kiln::half>();
  kiln::half *pc = c->data<kiln::half>();
  int32_t m32 = M, n32 = N, k32 = K, one = 1;
  Measured m;
  m.kernel = "matmul_kernel";
  m.shape = absl::StrFormat("M=%d N=%d K=%d", M, N, K);
  auto grid = [&](const mm::matmul_kernel_config &cfg) {
    return kiln::Grid(static_cast<uint32_t>(kiln::cdiv(M, cfg.BLOCK_SIZE_M) *
                                            kiln::cdiv(N, cfg.BLOCK_SIZE_N)));
  };
  // The default overload, as a user calls it.
  absl::StatusOr<kiln::BenchmarkTiming> timing = kiln::Benchmark(
      nullptr,
      [&] {
        return mm::launch_matmul_kernel(grid, nullptr, pa, pb, pc, m32, n32,
                                        k32, k32, one, n32, one, n32, one);
      },
      options);
  if (!timing.ok())
    return timing.status();
  m.default_ms = timing->median_ms;
  Explain(mm::matmul_kernel_info(), {M, N, K}, m);

  const kiln::KernelInfo &info = mm::matmul_kernel_info();
  std::vector<const void *> args = {&pa,  &pb,  &pc,  &m32, &n32, &k32,
                                    &k32, &one, &n32, &one, &n32, &one};
  auto grid_of = [&](int config) {
    std::string name = info.tuning->configs[config];
    int64_t bm = 0, bn = 0;
    std::sscanf(name.c_str(), "BLOCK_SIZE_M=%ld, BLOCK_SIZE_N=%ld", &bm, &bn);
    return kiln::Grid(
        static_cast<uint32_t>(kiln::cdiv(M, bm) * kiln::cdiv(N, bn)));
  };
  if (absl::Status s = TimeConfigs(info, args, grid_of, options, m); !s.ok()) {
    return s;
  }
  Print(m);
  return absl::OkStatus();
}

absl::Status Layernorm(int64_t M, int64_t N,
                       const kiln::BenchmarkOptions &options) {
  namespace ln = bench::tuned_layernorm;
  auto x = kiln::DeviceBuffer::Allocate(M * N * 2);
  auto y = kiln::DeviceBuffer::Allocate(M * N * 2);
  auto w = kiln::DeviceBuffer::Allocate(N * 2);
  auto b = kiln::DeviceBuffer::Allocate(N * 2);
  auto mean = kiln::DeviceBuffer::Allocate(M * 4);
  auto rstd = kiln::DeviceBuffer::Allocate(M * 4);
  if (!x.ok() || !y.ok() || !w.ok() || !b.ok() || !mean.ok() || !rstd.ok()) {
    return absl::ResourceExhaustedError("alloc");
  }
  std::vector<kiln::half> host(M * N);
  for (size_t i = 0; i < host.size(); ++i) {
    host[i] = kiln::half(static_cast<float>((i * 7919) % 23) / 11 - 1.0f);
  }
  if (absl::Status s = x->CopyFromHost(host.data(), M * N * 2); !s.ok())
    return s;
  if (absl::Status s = w->CopyFromHost(host.data(), N * 2); !s.ok())
    return s;
  if (absl::Status s = b->CopyFromHost(host.data() + N, N * 2); !s.ok())
    return s;
  kiln::half *px = x->data<kiln::half>();
  kiln::half *py = y->data<kiln::half>();
  kiln::half *pw = w->data<kiln::half>();
  kiln::half *pb = b->data<kiln::half>();
  float *pmean = mean->data<float>();
  float *prstd = rstd->data<float>();
  int32_t stride = N, n32 = N;
  float eps = 1e-5f;
  Measured m;
  m.kernel = "layernorm_kernel";
  m.shape = absl::StrFormat("M=%d N=%d", M, N);
  auto grid = [&](const ln::layernorm_kernel_config &) {
    return kiln::Grid(static_cast<uint32_t>(M));
  };
  absl::StatusOr<kiln::BenchmarkTiming> timing = kiln::Benchmark(
      nullptr,
      [&] {
        return ln::launch_layernorm_kernel(grid, nullptr, px, py, pw, pb, pmean,
                                           prstd, stride, n32, eps);
      },
      options);
  if (!timing.ok())
    return timing.status();
  m.default_ms = timing->median_ms;
  Explain(ln::layernorm_kernel_info(), {N}, m);
  std::vector<const void *> args = {&px,    &py,     &pw,  &pb, &pmean,
                                    &prstd, &stride, &n32, &eps};
  if (absl::Status s = TimeConfigs(
          ln::layernorm_kernel_info(), args,
          [&](int) { return kiln::Grid(static_cast<uint32_t>(M)); }, options,
          m);
      !s.ok()) {
    return s;
  }
  Print(m);
  return absl::OkStatus();
}

} // namespace

int main(int argc, char **argv) {
  kiln::BenchmarkOptions options;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runtime-tuning") == 0) {
      kiln::SetRuntimeTuning(kiln::RuntimeTuning::kUntuned);
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      options.warmup_ms = 5;
      options.rep_ms = 20;
    } else if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--runtime-tuning] [--quick] [--kernel "
                   "matmul|layernorm]\n",
                   argv[0]);
      return 2;
    }
  }
  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  if (!device.ok()) {
    std::fprintf(stderr, "tune_bench: %s\n",
                 device.status().ToString().c_str());
    return 1;
  }
  std::printf("DEVICE %s\n", JsonQuote(device->name).c_str());
  if (only.empty() || only == "matmul") {
    for (int64_t s : {256, 512, 1024, 2048, 4096, 8192}) {
      if (absl::Status st = Matmul(s, s, s, options); !st.ok()) {
        std::fprintf(stderr, "matmul %ld: %s\n", s, st.ToString().c_str());
        return 1;
      }
    }
    for (int64_t m : {16, 64}) {
      if (absl::Status st = Matmul(m, 4096, 4096, options); !st.ok()) {
        std::fprintf(stderr, "matmul M=%ld: %s\n", m, st.ToString().c_str());
        return 1;
      }
    }
  }
  if (only.empty() || only == "layernorm") {
    for (int64_t n : {512, 1024, 2048, 4096, 8192, 16384}) {
      if (absl::Status st = Layernorm(4096, n, options); !st.ok()) {
        std::fprintf(stderr, "layernorm N=%ld: %s\n", n, st.ToString().c_str());
        return 1;
      }
    }
  }
  return 0;
}
