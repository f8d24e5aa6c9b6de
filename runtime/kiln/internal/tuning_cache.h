// Internal: the per-kernel memo of tuned config choices, and the entry points
// that generated launchers of autotuned kernels call. Generated code defines
// one TuningCache per autotuned kernel; only kiln/tuning.cc touches it.

#ifndef KILN_INTERNAL_TUNING_CACHE_H_
#define KILN_INTERNAL_TUNING_CACHE_H_

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kiln/cuda_stream.h"
#include "kiln/tuning.h"
#include "kiln/tuning_table.h"

namespace kiln {

struct KernelInfo;

namespace internal {

struct CudaDriver;   // kiln/internal/cuda_driver.h
struct TuningState;  // kiln/tuning.cc

// Zero-initialized (a static of this type needs no constructor to run).
struct TuningCache {
  // Made on the first choice; never freed.
  std::atomic<TuningState*> state{nullptr};
  // 0: the process-wide mode; else 1 + RuntimeTuning.
  std::atomic<int> mode{0};
};

// The position, in overload `overload`'s configs, of the config a
// default-overload call of `kernel` with key values `key` (num_key of them,
// KernelTuningInfo::key's order) runs on `stream`'s context's device: see
// kiln/tuning.h. `run(position)` launches a config with the call's grid and
// arguments (run-time tuning times it). Never fails: without a driver,
// context or table it returns 0, the default.
int TunedConfigPosition(const KernelInfo& kernel, int overload,
                        const int64_t* key, CUstream stream,
                        absl::FunctionRef<absl::Status(int)> run);

// The same with `driver` (tests pass a fake).
int TunedConfigPositionWith(const CudaDriver& driver, const KernelInfo& kernel,
                            int overload, const int64_t* key, CUstream stream,
                            absl::FunctionRef<absl::Status(int)> run);

// kiln::BenchmarkInterleaved with `driver`.
absl::StatusOr<std::vector<BenchmarkTiming>> BenchmarkInterleavedWith(
    const CudaDriver& driver, CUstream stream,
    absl::Span<const absl::FunctionRef<absl::Status()>> launches,
    const BenchmarkOptions& options);

// kiln::Benchmark with `driver`.
absl::StatusOr<BenchmarkTiming> BenchmarkWith(
    const CudaDriver& driver, CUstream stream,
    absl::FunctionRef<absl::Status()> launch, const BenchmarkOptions& options);

// What run-time tuning measured for `kernels` on `device` (matched by name
// and compute capability), as a table (kiln::RuntimeTuningTable).
TuningTable MeasuredTuningTable(absl::Span<const KernelInfo* const> kernels,
                                const TuningDevice& device);

// Forgets every cached choice and measurement of `kernel` (tests).
void ResetTuningCache(const KernelInfo& kernel);

// A launcher argument behind a type-erased pointer (TuningOverload::launch);
// T is the launcher's parameter type (a reference type names its referent).
template <typename T>
const std::decay_t<T>& TuningArgument(const void* pointer) {
  return *static_cast<const std::decay_t<T>*>(pointer);
}

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_TUNING_CACHE_H_
