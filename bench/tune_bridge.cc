// A C interface to the launchers of bench/tune_matmul.sh's two autotuned
// kernels, for bench/tune_compare.py to call through ctypes on PyTorch's
// buffers and stream, so that Kiln's tuned launches and upstream Triton's
// autotuned ones are checked and timed the same way, interleaved, in one
// process:
//
//   kernel 0: matmul_kernel of upstream's tutorial 03 (unchanged; fp16 A, B
//             and C, ACTIVATION=""), bench::tuned_matmul;
//   kernel 1: layernorm_kernel of kernels/layernorm_autotuned.py (fp16 x, y,
//             w, b; fp32 mean and rstd), bench::tuned_layernorm.
//
// `position` -1 is the generated launcher's default overload, as a user
// calls it (grid a function of the config: the tuning table's choice for
// this device and key, or run-time tuning's); 0, 1, ... run one config of
// the overload's list through the type-erased config launcher that
// kiln-tune times.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bench/tune_layernorm.h"
#include "bench/tune_matmul.h"
#include "kiln/runtime.h"

namespace {

namespace mm = bench::tuned_matmul;
namespace ln = bench::tuned_layernorm;

const kiln::KernelInfo *InfoOf(int kernel) {
  switch (kernel) {
  case 0:
    return &mm::matmul_kernel_info();
  case 1:
    return &ln::layernorm_kernel_info();
  default:
    return nullptr;
  }
}

void CopyOut(const std::string &text, char *out, int out_size) {
  if (out == nullptr || out_size <= 0)
    return;
  std::snprintf(out, static_cast<size_t>(out_size), "%s", text.c_str());
}

int Report(const absl::Status &status, char *error, int error_size) {
  if (status.ok())
    return 0;
  CopyOut(status.ToString(), error, error_size);
  return 1;
}

// The value of `name` in a config as tables name it ("BLOCK_SIZE_M=64, ...").
int64_t ConfigValue(absl::string_view config, absl::string_view name) {
  for (absl::string_view entry : absl::StrSplit(config, ", ")) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(entry, '=');
    int64_t value = 0;
    if (kv.first == name && absl::SimpleAtoi(kv.second, &value))
      return value;
  }
  return 0;
}

absl::Status CheckPosition(const kiln::KernelInfo &info, int position) {
  int count = info.tuning->overloads[0].num_configs;
  if (position >= 0 && position < count)
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      info.name, ": no config at position ", position, " (", count, ")"));
}

const char *ConfigAt(const kiln::KernelInfo &info, int position) {
  const kiln::TuningOverload &overload = info.tuning->overloads[0];
  return info.tuning->configs[overload.configs[position]];
}

} // namespace

extern "C" {

// The number of configs of `kernel`'s launcher (0 for an unknown kernel).
int kiln_tune_num_configs(int kernel) {
  const kiln::KernelInfo *info = InfoOf(kernel);
  return info == nullptr ? 0 : info->tuning->overloads[0].num_configs;
}

// Writes config `position` of `kernel` as tables name it; 1 if out of range.
int kiln_tune_config(int kernel, int position, char *out, int out_size) {
  const kiln::KernelInfo *info = InfoOf(kernel);
  if (info == nullptr || position < 0 ||
      position >= info->tuning->overloads[0].num_configs) {
    return 1;
  }
  CopyOut(ConfigAt(*info, position), out, out_size);
  return 0;
}

// Whether a table embedded for `kernel` covers the current device (same
// compute capability, the launcher's rule): 1 yes, 0 no, -1 no device
// (`out` says why). Writes the embedded tables' origins and devices. With
// `runtime_tuning_without_table` and no such table, turns run-time tuning
// on for this kernel (kUntuned), so that the default overload measures on
// its first call for each key instead of running the first config.
int kiln_tune_prepare(int kernel, int runtime_tuning_without_table, char *out,
                      int out_size) {
  const kiln::KernelInfo *info = InfoOf(kernel);
  if (info == nullptr) {
    CopyOut("unknown kernel", out, out_size);
    return -1;
  }
  absl::StatusOr<kiln::DeviceInfo> device = kiln::CurrentDevice();
  if (!device.ok()) {
    CopyOut(device.status().ToString(), out, out_size);
    return -1;
  }
  std::string tables;
  bool covered = false;
  for (int t = 0; t < info->tuning->num_tables; ++t) {
    const kiln::EmbeddedTuningTable &table = info->tuning->tables[t];
    absl::StrAppend(&tables, tables.empty() ? "" : "; ", table.origin, " (",
                    table.device_name, ", ", table.compute_capability_major,
                    ".", table.compute_capability_minor, ")");
    covered =
        covered ||
        (table.compute_capability_major == device->compute_capability_major &&
         table.compute_capability_minor == device->compute_capability_minor);
  }
  if (!covered && runtime_tuning_without_table) {
    kiln::SetRuntimeTuning(*info, kiln::RuntimeTuning::kUntuned);
  }
  CopyOut(tables, out, out_size);
  return covered ? 1 : 0;
}

// Which config the default overload runs for these key values on the
// current device, and why: "CONFIG\tREASON". 1 on error (written to out).
int kiln_tune_explain(int kernel, const int64_t *key, int num_key, char *out,
                      int out_size) {
  const kiln::KernelInfo *info = InfoOf(kernel);
  if (info == nullptr)
    return 1;
  absl::StatusOr<kiln::ConfigChoice> choice =
      kiln::ExplainTunedConfig(*info, info->tuning->overloads[0].types,
                               absl::Span<const int64_t>(key, num_key));
  if (!choice.ok()) {
    CopyOut(choice.status().ToString(), out, out_size);
    return 1;
  }
  CopyOut(absl::StrCat(choice->config, "\t", choice->reason), out, out_size);
  return 0;
}

// C = A @ B with the tutorial's matmul_kernel on `stream` (a CUstream):
// sizes are M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
// stride_cn (elements). Returns 0 when queued, else 1 with the launcher's
// status in `error`.
int kiln_tune_matmul(int position, uint64_t a, uint64_t b, uint64_t c,
                     const int32_t *sizes, uint64_t stream, char *error,
                     int error_size) {
  CUstream s = reinterpret_cast<CUstream>(stream);
  auto *pa = reinterpret_cast<kiln::half *>(a);
  auto *pb = reinterpret_cast<kiln::half *>(b);
  auto *pc = reinterpret_cast<kiln::half *>(c);
  const int32_t m = sizes[0], n = sizes[1];
  if (position < 0) {
    auto grid = [m, n](const mm::matmul_kernel_config &config) {
      return kiln::Grid(
          static_cast<uint32_t>(kiln::cdiv(m, config.BLOCK_SIZE_M) *
                                kiln::cdiv(n, config.BLOCK_SIZE_N)));
    };
    return Report(mm::launch_matmul_kernel(grid, s, pa, pb, pc, sizes[0],
                                           sizes[1], sizes[2], sizes[3],
                                           sizes[4], sizes[5], sizes[6],
                                           sizes[7], sizes[8]),
                  error, error_size);
  }
  const kiln::KernelInfo &info = mm::matmul_kernel_info();
  if (absl::Status st = CheckPosition(info, position); !st.ok()) {
    return Report(st, error, error_size);
  }
  absl::string_view config = ConfigAt(info, position);
  kiln::Grid grid(static_cast<uint32_t>(
      kiln::cdiv(m, ConfigValue(config, "BLOCK_SIZE_M")) *
      kiln::cdiv(n, ConfigValue(config, "BLOCK_SIZE_N"))));
  std::vector<const void *> args = {&pa,       &pb,       &pc,       &sizes[0],
                                    &sizes[1], &sizes[2], &sizes[3], &sizes[4],
                                    &sizes[5], &sizes[6], &sizes[7], &sizes[8]};
  return Report(
      info.tuning->overloads[0].launch(position, grid, s, args.data()), error,
      error_size);
}

// The layer norm forward over `rows` rows of width N (row stride `stride`
// elements), one program per row, on `stream`. Returns as kiln_tune_matmul.
int kiln_tune_layernorm(int position, uint64_t x, uint64_t y, uint64_t w,
                        uint64_t b, uint64_t mean, uint64_t rstd, int32_t rows,
                        int32_t stride, int32_t n, float eps, uint64_t stream,
                        char *error, int error_size) {
  CUstream s = reinterpret_cast<CUstream>(stream);
  auto *px = reinterpret_cast<kiln::half *>(x);
  auto *py = reinterpret_cast<kiln::half *>(y);
  auto *pw = reinterpret_cast<kiln::half *>(w);
  auto *pb = reinterpret_cast<kiln::half *>(b);
  auto *pmean = reinterpret_cast<float *>(mean);
  auto *prstd = reinterpret_cast<float *>(rstd);
  kiln::Grid grid(static_cast<uint32_t>(rows));
  if (position < 0) {
    auto grid_of = [rows](const ln::layernorm_kernel_config &) {
      return kiln::Grid(static_cast<uint32_t>(rows));
    };
    return Report(ln::launch_layernorm_kernel(grid_of, s, px, py, pw, pb, pmean,
                                              prstd, stride, n, eps),
                  error, error_size);
  }
  const kiln::KernelInfo &info = ln::layernorm_kernel_info();
  if (absl::Status st = CheckPosition(info, position); !st.ok()) {
    return Report(st, error, error_size);
  }
  std::vector<const void *> args = {&px,    &py,     &pw, &pb, &pmean,
                                    &prstd, &stride, &n,  &eps};
  return Report(
      info.tuning->overloads[0].launch(position, grid, s, args.data()), error,
      error_size);
}

} // extern "C"
