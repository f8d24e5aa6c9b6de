#include "kiln/tuning.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "kiln/device.h"
#include "kiln/internal/context.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/mutex_lock.h"
#include "kiln/internal/tuning_cache.h"
#include "kiln/introspection.h"
#include "kiln/kernel_info.h"
#include "kiln/tuning_table.h"

namespace kiln {
namespace internal {

namespace {

// The L2 flush buffer of kiln::Benchmark: larger than any GPU's L2 cache,
// as upstream's do_bench uses.
constexpr size_t kFlushBytes = size_t{256} << 20;

struct CacheKey {
  const void* context;
  int overload;
  absl::InlinedVector<int64_t, 6> key;

  bool operator==(const CacheKey& other) const {
    return context == other.context && overload == other.overload &&
           key == other.key;
  }
  template <typename H>
  friend H AbslHashValue(H h, const CacheKey& k) {
    return H::combine(std::move(h), k.context, k.overload, k.key);
  }
};

struct CachedChoice {
  int position = 0;
  // Set when run-time tuning measured it.
  bool measured = false;
  double ms = 0;
};

// What run-time tuning measured for one (device, overload, key).
struct Measurement {
  TuningTarget device;
  int sm_count = 0;
  int driver_version = 0;
  int overload = 0;
  std::vector<int64_t> key;
  std::vector<std::pair<int, double>> ranking;  // position, ms
  std::vector<std::pair<int, std::string>> rejected;
};

}  // namespace

struct TuningState {
  absl::Mutex mu;
  absl::flat_hash_map<CacheKey, CachedChoice> choices ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<const void*, TuningTarget> devices ABSL_GUARDED_BY(mu);
  std::vector<Measurement> measurements ABSL_GUARDED_BY(mu);
  // Held while measuring, so that one configuration runs at a time.
  absl::Mutex measure_mu;
};

namespace {

// -1: not read from the environment yet; else a RuntimeTuning.
std::atomic<int> global_mode{-1};

RuntimeTuning GlobalMode() {
  int mode = global_mode.load(std::memory_order_acquire);
  if (mode >= 0) return static_cast<RuntimeTuning>(mode);
  RuntimeTuning from_env = RuntimeTuning::kOff;
  if (const char* env = std::getenv("KILN_RUNTIME_TUNING")) {
    if (std::strcmp(env, "untuned") == 0 || std::strcmp(env, "1") == 0) {
      from_env = RuntimeTuning::kUntuned;
    } else if (std::strcmp(env, "always") == 0) {
      from_env = RuntimeTuning::kAlways;
    }
  }
  int expected = -1;
  global_mode.compare_exchange_strong(expected, static_cast<int>(from_env));
  return static_cast<RuntimeTuning>(global_mode.load());
}

RuntimeTuning ModeFor(const KernelTuningInfo& tuning) {
  int own = tuning.cache->mode.load(std::memory_order_relaxed);
  return own == 0 ? GlobalMode() : static_cast<RuntimeTuning>(own - 1);
}

TuningState& StateOf(const KernelTuningInfo& tuning) {
  TuningState* state = tuning.cache->state.load(std::memory_order_acquire);
  if (state != nullptr) return *state;
  auto* fresh = new TuningState;
  if (tuning.cache->state.compare_exchange_strong(state, fresh,
                                                  std::memory_order_acq_rel)) {
    return *fresh;
  }
  delete fresh;
  return *state;
}

std::string KeyText(const KernelTuningInfo& tuning,
                    absl::Span<const int64_t> key) {
  std::vector<std::string> parts;
  for (int i = 0; i < tuning.num_key && i < static_cast<int>(key.size()); ++i) {
    parts.push_back(absl::StrCat(tuning.key[i], "=", key[i]));
  }
  return parts.empty() ? std::string("(no key)") : absl::StrJoin(parts, ", ");
}

const char* ConfigName(const KernelTuningInfo& tuning, int overload,
                       int position) {
  const TuningOverload& o = tuning.overloads[overload];
  return tuning.configs[o.configs[position]];
}

struct Selection {
  ConfigChoice choice;
  KeyMatchKind match = KeyMatchKind::kNone;
};

Selection Select(const KernelInfo& kernel, int overload,
                 absl::Span<const int64_t> key, const TuningTarget& device) {
  const KernelTuningInfo& tuning = *kernel.tuning;
  Selection s;
  s.choice.overload = overload;
  // Same name and compute capability first, then the same compute
  // capability; the rule's order breaks ties.
  const EmbeddedTuningTable* table = nullptr;
  bool same_name = false;
  for (int i = 0; i < tuning.num_tables; ++i) {
    const EmbeddedTuningTable& t = tuning.tables[i];
    if (t.overload != overload ||
        t.compute_capability_major != device.compute_capability_major ||
        t.compute_capability_minor != device.compute_capability_minor) {
      continue;
    }
    bool name = device.name == t.device_name;
    if (table == nullptr || (name && !same_name)) {
      table = &t;
      same_name = name;
    }
  }
  std::string device_text =
      absl::StrCat(device.name, ", ", device.compute_capability_major, ".",
                   device.compute_capability_minor);
  if (table == nullptr || table->num_results == 0) {
    s.choice.position = 0;
    s.choice.reason =
        absl::StrCat(tuning.num_tables == 0
                         ? "no tuning table was built in"
                         : absl::StrCat("no tuning table for this device (",
                                        device_text, ") and these types"),
                     ": the first config, the default");
    s.choice.config = ConfigName(tuning, overload, 0);
    return s;
  }
  KeyMatch match = MatchTuningKey(key, table->num_results, [&](int i) {
    return absl::Span<const int64_t>(table->results[i].key, key.size());
  });
  const EmbeddedTuningResult& result = table->results[match.index];
  s.match = match.kind;
  s.choice.position = result.ranking[0];
  s.choice.config = ConfigName(tuning, overload, s.choice.position);
  std::string where = absl::StrCat(
      table->origin, " (", table->device_name, ", ",
      table->compute_capability_major, ".", table->compute_capability_minor,
      same_name ? ""
                : "; another device of this compute "
                  "capability",
      ")");
  std::string how =
      match.kind == KeyMatchKind::kExact
          ? absl::StrCat("exact result for ", KeyText(tuning, key))
          : absl::StrCat("no result for ", KeyText(tuning, key),
                         ", nearest power-of-two bucket ",
                         KeyText(tuning, absl::Span<const int64_t>(result.key,
                                                                   key.size())),
                         match.bucket_distance == 0
                             ? " (same bucket)"
                             : absl::StrCat(" (", match.bucket_distance,
                                            " bucket steps away)"));
  s.choice.reason =
      absl::StrFormat("%s: %s: %.4g ms, fastest of %d measured", where, how,
                      result.ms[0], result.num_ranked);
  return s;
}

absl::StatusOr<int> FindOverload(const KernelInfo& kernel,
                                 absl::string_view types, size_t key_size) {
  if (kernel.tuning == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel.name,
        ": not built with autotune, so no config is chosen by tuning"));
  }
  const KernelTuningInfo& tuning = *kernel.tuning;
  if (static_cast<int>(key_size) != tuning.num_key) {
    return absl::InvalidArgumentError(absl::StrCat(
        kernel.name, ": expected ", tuning.num_key, " key values (",
        absl::StrJoin(tuning.key, tuning.key + tuning.num_key, ", "), "), got ",
        key_size));
  }
  std::vector<std::string> known;
  for (int i = 0; i < tuning.num_overloads; ++i) {
    if (types == tuning.overloads[i].types) return i;
    known.push_back(absl::StrCat("(", tuning.overloads[i].types, ")"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(kernel.name, ": no overload for types (", types,
                   "); compiled: ", absl::StrJoin(known, ", ")));
}

// The device of `context`, which must be current (cuCtxGetDevice answers for
// the current one); cached per context.
absl::StatusOr<TuningTarget> TargetOf(const CudaDriver& d, const void* context,
                                      TuningState& state) {
  {
    kiln::internal::MutexLock lock(&state.mu);
    auto it = state.devices.find(context);
    if (it != state.devices.end()) return it->second;
  }
  CUdevice device;
  absl::Status status =
      CudaStatus(d, d.ctx_get_device(&device), "cuCtxGetDevice");
  if (!status.ok()) return status;
  TuningTarget target;
  char name[256] = {};
  if (d.device_get_name != nullptr &&
      d.device_get_name(name, sizeof(name) - 1, device) == CUDA_SUCCESS) {
    target.name = name;
  }
  absl::StatusOr<internal::DeviceCapability> capability =
      internal::CurrentDeviceCapability(d);
  if (!capability.ok()) return capability.status();
  target.compute_capability_major = capability->major;
  target.compute_capability_minor = capability->minor;
  kiln::internal::MutexLock lock(&state.mu);
  state.devices.emplace(context, target);
  return target;
}

bool Capturing(const CudaDriver& d, CUstream stream) {
  if (d.stream_is_capturing == nullptr) return true;  // cannot tell: be safe
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (d.stream_is_capturing(stream, &status) != CUDA_SUCCESS) return true;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double at = q * (sorted.size() - 1);
  size_t low = static_cast<size_t>(at);
  size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

}  // namespace

absl::StatusOr<std::vector<BenchmarkTiming>> BenchmarkInterleavedWith(
    const CudaDriver& d, CUstream stream,
    absl::Span<const absl::FunctionRef<absl::Status()>> launches,
    const BenchmarkOptions& options) {
  if (launches.empty()) return std::vector<BenchmarkTiming>();
  const int n = static_cast<int>(launches.size());
  // The flush buffer and the events must live where the stream runs.
  const StreamContextScope stream_context(d, stream);
  if (!stream_context.status().ok()) return stream_context.status();
  absl::Status status;
  for (int j = 0; j < n && status.ok(); ++j) status = launches[j]();
  if (!status.ok()) return status;
  status = CudaStatus(d, d.stream_synchronize(stream), "cuStreamSynchronize");
  if (!status.ok()) return status;

  CUdeviceptr flush = 0;
  if (options.flush_l2 && d.memset_d8_async != nullptr &&
      d.mem_alloc(&flush, kFlushBytes) != CUDA_SUCCESS) {
    flush = 0;  // time without flushing rather than fail
  }
  std::vector<CUevent> events;
  auto cleanup = [&] {
    for (CUevent e : events) d.event_destroy(e);
    if (flush != 0) d.mem_free(flush);
  };
  auto flush_l2 = [&]() -> absl::Status {
    if (flush == 0) return absl::OkStatus();
    return CudaStatus(d, d.memset_d8_async(flush, 0, kFlushBytes, stream),
                      "cuMemsetD8Async");
  };
  auto make_events = [&](int count) -> absl::Status {
    for (int i = 0; i < count; ++i) {
      CUevent e = nullptr;
      absl::Status s =
          CudaStatus(d, d.event_create(&e, CU_EVENT_DEFAULT), "cuEventCreate");
      if (!s.ok()) return s;
      events.push_back(e);
    }
    return absl::OkStatus();
  };
  auto elapsed = [&](CUevent start, CUevent stop) -> absl::StatusOr<double> {
    absl::Status s =
        CudaStatus(d, d.event_synchronize(stop), "cuEventSynchronize");
    if (!s.ok()) return s;
    float ms = 0;
    s = CudaStatus(d, d.event_elapsed_time(&ms, start, stop),
                   "cuEventElapsedTime");
    if (!s.ok()) return s;
    return static_cast<double>(ms);
  };
  auto run = [&]() -> absl::StatusOr<std::vector<BenchmarkTiming>> {
    // Estimate one launch (with its flush), on average, from five rounds.
    absl::Status s = make_events(2);
    if (!s.ok()) return s;
    s = CudaStatus(d, d.event_record(events[0], stream), "cuEventRecord");
    for (int i = 0; i < 5 && s.ok(); ++i) {
      for (int j = 0; j < n && s.ok(); ++j) {
        s = flush_l2();
        if (s.ok()) s = launches[j]();
      }
    }
    if (s.ok()) {
      s = CudaStatus(d, d.event_record(events[1], stream), "cuEventRecord");
    }
    if (!s.ok()) return s;
    absl::StatusOr<double> five = elapsed(events[0], events[1]);
    if (!five.ok()) return five.status();
    double estimate = std::max(*five / (5 * n), 1e-4);
    int warmup = std::max(1, static_cast<int>(options.warmup_ms / estimate));
    int reps = std::clamp(static_cast<int>(options.rep_ms / estimate), 1,
                          std::max(1, options.max_reps));
    for (int i = 0; i < warmup && s.ok(); ++i) {
      for (int j = 0; j < n && s.ok(); ++j) s = launches[j]();
    }
    if (!s.ok()) return s;
    // Repetition i times every launch once, starting one further along
    // each time: a drift of the GPU's clocks reaches them alike.
    const size_t first = events.size();
    s = make_events(2 * reps * n);
    auto event_of = [&](int rep, int j, int which) {
      return events[first + 2 * (static_cast<size_t>(rep) * n + j) + which];
    };
    for (int i = 0; i < reps && s.ok(); ++i) {
      for (int k = 0; k < n && s.ok(); ++k) {
        const int j = (i + k) % n;
        s = flush_l2();
        if (s.ok()) {
          s = CudaStatus(d, d.event_record(event_of(i, j, 0), stream),
                         "cuEventRecord");
        }
        if (s.ok()) s = launches[j]();
        if (s.ok()) {
          s = CudaStatus(d, d.event_record(event_of(i, j, 1), stream),
                         "cuEventRecord");
        }
      }
    }
    if (!s.ok()) return s;
    std::vector<BenchmarkTiming> timings;
    for (int j = 0; j < n; ++j) {
      std::vector<double> times;
      for (int i = 0; i < reps; ++i) {
        absl::StatusOr<double> t =
            elapsed(event_of(i, j, 0), event_of(i, j, 1));
        if (!t.ok()) return t.status();
        times.push_back(*t);
      }
      std::sort(times.begin(), times.end());
      BenchmarkTiming timing;
      timing.median_ms = Quantile(times, 0.5);
      timing.p20_ms = Quantile(times, 0.2);
      timing.p80_ms = Quantile(times, 0.8);
      timing.reps = reps;
      timings.push_back(timing);
    }
    return timings;
  };
  absl::StatusOr<std::vector<BenchmarkTiming>> timings = run();
  cleanup();
  return timings;
}

absl::StatusOr<BenchmarkTiming> BenchmarkWith(
    const CudaDriver& d, CUstream stream,
    absl::FunctionRef<absl::Status()> launch, const BenchmarkOptions& options) {
  absl::StatusOr<std::vector<BenchmarkTiming>> timings =
      BenchmarkInterleavedWith(d, stream, {launch}, options);
  if (!timings.ok()) return timings.status();
  return timings->front();
}

int TunedConfigPositionWith(const CudaDriver& d, const KernelInfo& kernel,
                            int overload, const int64_t* key, CUstream stream,
                            absl::FunctionRef<absl::Status(int)> run) {
  const KernelTuningInfo* tuning = kernel.tuning;
  if (tuning == nullptr || overload < 0 || overload >= tuning->num_overloads) {
    return 0;
  }
  RuntimeTuning mode = ModeFor(*tuning);
  if (tuning->num_tables == 0 && mode == RuntimeTuning::kOff) return 0;
  // The choice is the stream's device's, and so is the cache entry; the
  // device query and any measurement run in the stream's context.
  const StreamContextScope stream_context(d, stream);
  if (!stream_context.status().ok()) return 0;  // the launch reports it
  const CUcontext context = stream_context.context();
  TuningState& state = StateOf(*tuning);
  CacheKey cache_key{
      context, overload,
      absl::InlinedVector<int64_t, 6>(key, key + tuning->num_key)};
  {
    kiln::internal::MutexLock lock(&state.mu);
    auto it = state.choices.find(cache_key);
    if (it != state.choices.end()) return it->second.position;
  }
  absl::StatusOr<TuningTarget> device = TargetOf(d, context, state);
  if (!device.ok()) return 0;
  absl::Span<const int64_t> values(key, tuning->num_key);
  Selection selection = Select(kernel, overload, values, *device);
  CachedChoice choice{selection.choice.position, false, 0};
  bool measure = mode == RuntimeTuning::kAlways ||
                 (mode == RuntimeTuning::kUntuned &&
                  selection.match != KeyMatchKind::kExact);
  if (measure) {
    // Never inside a capture: the measurement would synchronize.
    if (Capturing(d, stream)) return choice.position;
    kiln::internal::MutexLock measuring(&state.measure_mu);
    {
      kiln::internal::MutexLock lock(&state.mu);
      auto it = state.choices.find(cache_key);
      if (it != state.choices.end()) return it->second.position;
    }
    Measurement m;
    m.device = *device;
    m.overload = overload;
    m.key.assign(values.begin(), values.end());
    BenchmarkOptions options;
    const TuningOverload& o = tuning->overloads[overload];
    // Every config that launches is timed against the others, interleaved
    // (one timed in a block of its own can be a few percent off a
    // neighbour's block, more than near-best configs differ).
    std::vector<int> launching;
    for (int position = 0; position < o.num_configs; ++position) {
      absl::Status launched = run(position);
      if (launched.ok()) {
        launched =
            CudaStatus(d, d.stream_synchronize(stream), "cuStreamSynchronize");
      }
      if (launched.ok()) {
        launching.push_back(position);
      } else {
        m.rejected.emplace_back(position, launched.ToString());
      }
    }
    std::vector<std::function<absl::Status()>> runs;
    for (int position : launching)
      runs.push_back([&, position] { return run(position); });
    std::vector<absl::FunctionRef<absl::Status()>> refs(runs.begin(),
                                                        runs.end());
    absl::StatusOr<std::vector<BenchmarkTiming>> timings =
        BenchmarkInterleavedWith(d, stream, refs, options);
    for (size_t i = 0; i < launching.size(); ++i) {
      if (timings.ok()) {
        m.ranking.emplace_back(launching[i], (*timings)[i].median_ms);
      } else {
        m.rejected.emplace_back(launching[i], timings.status().ToString());
      }
    }
    std::stable_sort(
        m.ranking.begin(), m.ranking.end(),
        [](const auto& a, const auto& b) { return a.second < b.second; });
    if (!m.ranking.empty()) {
      choice = CachedChoice{m.ranking[0].first, true, m.ranking[0].second};
    }
    kiln::internal::MutexLock lock(&state.mu);
    state.measurements.push_back(std::move(m));
    state.choices.emplace(std::move(cache_key), choice);
    return choice.position;
  }
  kiln::internal::MutexLock lock(&state.mu);
  state.choices.emplace(std::move(cache_key), choice);
  return choice.position;
}

int TunedConfigPosition(const KernelInfo& kernel, int overload,
                        const int64_t* key, CUstream stream,
                        absl::FunctionRef<absl::Status(int)> run) {
  const KernelTuningInfo* tuning = kernel.tuning;
  if (tuning == nullptr ||
      (tuning->num_tables == 0 && ModeFor(*tuning) == RuntimeTuning::kOff)) {
    return 0;
  }
  const absl::StatusOr<const CudaDriver*>& driver = GetCudaDriver();
  if (!driver.ok()) return 0;
  return TunedConfigPositionWith(**driver, kernel, overload, key, stream, run);
}

void ResetTuningCache(const KernelInfo& kernel) {
  if (kernel.tuning == nullptr) return;
  TuningState& state = StateOf(*kernel.tuning);
  kiln::internal::MutexLock lock(&state.mu);
  state.choices.clear();
  state.devices.clear();
  state.measurements.clear();
}

}  // namespace internal

absl::StatusOr<ConfigChoice> SelectTunedConfig(const KernelInfo& kernel,
                                               absl::string_view types,
                                               absl::Span<const int64_t> key,
                                               const TuningTarget& device) {
  absl::StatusOr<int> overload =
      internal::FindOverload(kernel, types, key.size());
  if (!overload.ok()) return overload.status();
  return internal::Select(kernel, *overload, key, device).choice;
}

absl::StatusOr<ConfigChoice> ExplainTunedConfig(const KernelInfo& kernel,
                                                absl::string_view types,
                                                absl::Span<const int64_t> key) {
  using internal::CudaDriver;
  absl::StatusOr<int> overload =
      internal::FindOverload(kernel, types, key.size());
  if (!overload.ok()) return overload.status();
  const absl::StatusOr<const CudaDriver*>& driver = internal::GetCudaDriver();
  if (!driver.ok()) return driver.status();
  absl::StatusOr<CUcontext> context =
      internal::CurrentOrPrimaryContext(**driver);
  if (!context.ok()) return context.status();
  internal::TuningState& state = internal::StateOf(*kernel.tuning);
  absl::StatusOr<TuningTarget> device =
      internal::TargetOf(**driver, *context, state);
  if (!device.ok()) return device.status();
  {
    kiln::internal::MutexLock lock(&state.mu);
    auto it = state.choices.find(internal::CacheKey{
        *context, *overload,
        absl::InlinedVector<int64_t, 6>(key.begin(), key.end())});
    if (it != state.choices.end() && it->second.measured) {
      ConfigChoice choice;
      choice.overload = *overload;
      choice.position = it->second.position;
      choice.config =
          internal::ConfigName(*kernel.tuning, *overload, choice.position);
      choice.reason = absl::StrFormat(
          "measured by run-time tuning in this process: %.4g ms, fastest",
          it->second.ms);
      return choice;
    }
  }
  return internal::Select(kernel, *overload, key, *device).choice;
}

void SetRuntimeTuning(RuntimeTuning mode) {
  internal::global_mode.store(static_cast<int>(mode),
                              std::memory_order_release);
}

void SetRuntimeTuning(const KernelInfo& kernel, RuntimeTuning mode) {
  if (kernel.tuning == nullptr) return;
  kernel.tuning->cache->mode.store(1 + static_cast<int>(mode),
                                   std::memory_order_relaxed);
}

namespace internal {

TuningTable MeasuredTuningTable(absl::Span<const KernelInfo* const> kernels,
                                const TuningDevice& device) {
  TuningTable table;
  table.device = device;
  table.kiln_version = kKilnVersion;
  for (const KernelInfo* kernel : kernels) {
    const KernelTuningInfo* tuning = kernel->tuning;
    if (tuning == nullptr) continue;
    TuningState* state = tuning->cache->state.load(std::memory_order_acquire);
    if (state == nullptr) continue;
    KernelTuning out;
    out.kernel = kernel->name;
    out.key.assign(tuning->key, tuning->key + tuning->num_key);
    kiln::internal::MutexLock lock(&state->mu);
    std::vector<std::pair<int, std::vector<int64_t>>> seen;
    for (const Measurement& m : state->measurements) {
      if (m.device.name != device.name ||
          m.device.compute_capability_major !=
              device.compute_capability_major ||
          m.device.compute_capability_minor !=
              device.compute_capability_minor ||
          m.ranking.empty()) {
        continue;
      }
      // Two contexts on one device may have measured the same key.
      if (std::find(seen.begin(), seen.end(),
                    std::make_pair(m.overload, m.key)) != seen.end()) {
        continue;
      }
      seen.emplace_back(m.overload, m.key);
      TuningResult result;
      result.types = tuning->overloads[m.overload].types;
      result.key = m.key;
      for (const auto& [position, ms] : m.ranking) {
        result.ranking.push_back(
            {ConfigName(*tuning, m.overload, position), ms});
      }
      for (const auto& [position, reason] : m.rejected) {
        result.rejected.push_back(
            {ConfigName(*tuning, m.overload, position), reason});
      }
      out.results.push_back(std::move(result));
    }
    if (!out.results.empty()) table.kernels.push_back(std::move(out));
  }
  return table;
}

}  // namespace internal

absl::StatusOr<TuningTable> RuntimeTuningTable() {
  absl::StatusOr<DeviceInfo> device = CurrentDevice();
  if (!device.ok()) return device.status();
  TuningDevice target;
  target.name = device->name;
  target.compute_capability_major = device->compute_capability_major;
  target.compute_capability_minor = device->compute_capability_minor;
  target.sm_count = device->multiprocessors;
  target.driver_version = device->driver_version;
  std::vector<const KernelInfo*> kernels = RegisteredKernels();
  return internal::MeasuredTuningTable(kernels, target);
}

absl::StatusOr<std::vector<BenchmarkTiming>> BenchmarkInterleaved(
    CUstream stream,
    absl::Span<const absl::FunctionRef<absl::Status()>> launches,
    const BenchmarkOptions& options) {
  const absl::StatusOr<const internal::CudaDriver*>& driver =
      internal::GetCudaDriver();
  if (!driver.ok()) return driver.status();
  return internal::BenchmarkInterleavedWith(**driver, stream, launches,
                                            options);
}

absl::StatusOr<BenchmarkTiming> Benchmark(
    CUstream stream, absl::FunctionRef<absl::Status()> launch,
    const BenchmarkOptions& options) {
  const absl::StatusOr<const internal::CudaDriver*>& driver =
      internal::GetCudaDriver();
  if (!driver.ok()) return driver.status();
  return internal::BenchmarkWith(**driver, stream, launch, options);
}

}  // namespace kiln
