// Tuned config choice: how the generated launchers of an autotuned kernel
// pick a compiled config for the device and the call's `key` arguments, and
// how to ask them why.
//
// A kernel built with `autotune = True` carries a KernelTuningInfo (reached
// through KernelInfo::tuning): its @triton.autotune key, its configs, per
// overload a type-erased launcher (what kiln-tune calls) and the tuning
// tables the build embedded (`tuning_tables`, kiln/tuning_table.h). The
// overload without a config, called with a grid that is a function of the
// config, runs:
//
//   1. the table for this device (same name and compute capability, else
//      only the same compute capability): the best config of the result
//      with exactly the call's key values, else of the nearest bucket
//      (kiln::MatchTuningKey);
//   2. with run-time tuning on (SetRuntimeTuning, KILN_RUNTIME_TUNING), the
//      fastest config measured on the first call for these key values when
//      the table had no exact result (or always, in kAlways mode);
//   3. else the first config (the decorator's first), as without tables.
//
// "This device" is the device of the launch stream's context (a null stream:
// the current context's), and the choice is cached per (that context,
// overload, key values), thread-safely.
// A call with fixed grid extents (a kiln::Grid) always runs the default
// config, since its extents were computed for it.

#ifndef KILN_TUNING_H_
#define KILN_TUNING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kiln/cuda_stream.h"
#include "kiln/grid.h"
#include "kiln/tuning_table.h"

namespace kiln {

struct KernelInfo;

namespace internal {
struct TuningCache;  // the runtime's, in kiln/internal/tuning_cache.h
}  // namespace internal

// One result of an embedded table: key values and the ranking, as positions
// in the overload's config list (fastest first) with their times.
struct EmbeddedTuningResult {
  const int64_t* key;
  const int* ranking;
  const float* ms;
  int num_ranked;
};

// What one embedded table holds for one overload of a kernel.
struct EmbeddedTuningTable {
  // The table's file as the build named it, e.g. "tuning/h100.json".
  const char* origin;
  const char* device_name;
  int compute_capability_major;
  int compute_capability_minor;
  int sm_count;
  int driver_version;
  const char* kiln_version;
  // Index into KernelTuningInfo::overloads.
  int overload;
  // Sorted by key values.
  const EmbeddedTuningResult* results;
  int num_results;
};

// One launcher overload (tuple of parameter types) of an autotuned kernel.
struct TuningOverload {
  // Its parameter types, joined by ", ", as tables name it.
  const char* types;
  // Its configs, as indices into KernelTuningInfo::configs; the first is the
  // default.
  const int* configs;
  int num_configs;
  // Launches config `position` (into `configs`) over `grid` on `stream`;
  // args[i] points to the value of the variants' i-th ParamInfo, of the C++
  // type the launcher takes for it (a tuple's elements one by one, which the
  // launch packs into the tuple; a None element's pointer is not read). What
  // kiln-tune calls; the explicit-config overload's checks apply.
  absl::Status (*launch)(int position, Grid grid, CUstream stream,
                         const void* const* args);
};

// The autotuning description of a kernel built with `autotune = True`.
struct KernelTuningInfo {
  // The @triton.autotune key arguments the launchers pass the values of (the
  // decorator's integer-typed key names, in order) and their indices among
  // the kernel's parameters (ParamInfo).
  const char* const* key;
  const int* key_params;
  int num_key;
  // Every config of the kernel, as tables name them
  // ("BLOCK=1024, num_warps=4, num_stages=3").
  const char* const* configs;
  int num_configs;
  const TuningOverload* overloads;
  int num_overloads;
  const EmbeddedTuningTable* tables;
  int num_tables;
  // Runtime bookkeeping, owned by the runtime. Never null in generated code.
  internal::TuningCache* cache;
};

// Which config a default-overload call would run, and why.
struct ConfigChoice {
  // Into KernelTuningInfo::overloads.
  int overload = 0;
  // Into the overload's configs (0: the default).
  int position = 0;
  // The config, as tables name it.
  std::string config;
  // For people, e.g. "tuning/h100.json (NVIDIA H100 80GB HBM3, 9.0): exact
  // result for M=4096, N=4096, K=4096: 0.203 ms, fastest of 8".
  std::string reason;
};

// The device a choice is made for.
struct TuningTarget {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
};

// The choice the embedded tables make for `kernel`'s overload `types` (its
// parameter types joined by ", ") and `key` values on `device` (steps 1 and
// 3 above; run-time tuning aside). Pure: needs no driver. InvalidArgument
// when the kernel was not built with autotune, has no such overload, or
// `key` has the wrong length.
absl::StatusOr<ConfigChoice> SelectTunedConfig(const KernelInfo& kernel,
                                               absl::string_view types,
                                               absl::Span<const int64_t> key,
                                               const TuningTarget& device);

// What a default-overload call with these key values would run on the
// current device now (a call on a stream of the current context; a run-time
// tuning winner included, if one was measured). Errors as SelectTunedConfig, or
// when there is no driver or GPU.
absl::StatusOr<ConfigChoice> ExplainTunedConfig(const KernelInfo& kernel,
                                                absl::string_view types,
                                                absl::Span<const int64_t> key);

// Run-time tuning, for shapes no table covers (docs/usage.md, "Tuning").
enum class RuntimeTuning {
  // Tables and the default only (the default mode).
  kOff,
  // Measure every config on the first call for key values that have no
  // exact result in the table for this device.
  kUntuned,
  // Measure on the first call for every new tuple of key values.
  kAlways,
};

// Sets the mode for every kernel (overriding the environment variable
// KILN_RUNTIME_TUNING=off|untuned|always, read on the first launch), or for
// one kernel (overriding the process-wide mode). Measuring runs the
// kernel several times on the caller's arguments, as upstream's autotuner
// does: a kernel that accumulates into its outputs must not be tuned so.
// Measurement is skipped while `stream` is being captured into a CUDA graph
// (the table or default choice runs, and is not cached).
void SetRuntimeTuning(RuntimeTuning mode);
void SetRuntimeTuning(const KernelInfo& kernel, RuntimeTuning mode);

// Everything run-time tuning measured in this process on the current
// device, as a table for the next build's `tuning_tables`.
absl::StatusOr<TuningTable> RuntimeTuningTable();

// GPU timing of a launch, as upstream's triton.testing.do_bench measures:
// one launch, an estimate from five, then warm-up launches for `warmup_ms`
// and `rep_ms` worth of timed launches (at least one, at most `max_reps`),
// each after overwriting a 256 MiB buffer so that the L2 cache holds none
// of the launch's data, each timed with its own pair of CUDA events.
struct BenchmarkOptions {
  double warmup_ms = 25;
  double rep_ms = 100;
  int max_reps = 1000;
  bool flush_l2 = true;
};
struct BenchmarkTiming {
  double median_ms = 0;
  double p20_ms = 0;
  double p80_ms = 0;
  int reps = 0;
};
// `launch` queues the work on `stream`; its first error is returned. The
// flush buffer and the events are made in the stream's context (a null
// stream: the current one), current while this runs.
absl::StatusOr<BenchmarkTiming> Benchmark(
    CUstream stream, absl::FunctionRef<absl::Status()> launch,
    const BenchmarkOptions& options = {});
// Several launches timed against each other, as Benchmark times one: each
// timed repetition runs every launch once (an L2 flush before each, a
// different one first each time), so that the GPU's clock drift and warm-up
// reach them alike; `rep_ms` is per launch. One timing per launch, in order.
// Configs whose times differ by a few percent rank reliably only this way.
absl::StatusOr<std::vector<BenchmarkTiming>> BenchmarkInterleaved(
    CUstream stream,
    absl::Span<const absl::FunctionRef<absl::Status()>> launches,
    const BenchmarkOptions& options = {});

}  // namespace kiln

#endif  // KILN_TUNING_H_
