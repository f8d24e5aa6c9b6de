// Tuning tables: which compiled config of an autotuned kernel is fastest for
// which shapes, measured on one GPU.
//
// `kiln-tune` measures every config of a `triton_kernel` target built with
// `autotune = True` over a list of shapes and writes a table; the rule's
// `tuning_tables` attribute (`TUNING_TABLES` in CMake) embeds tables in the
// generated library, whose launchers then run the best config for the
// device and the call's `key` arguments (docs/usage.md, "Tuning"). This
// header is the table's format, its parser and writer, and the key-matching
// rule that both the build and the launchers use.
//
// The format (JSON, version 1):
//
//   {
//     "kiln_tuning_table": 1,
//     "device": {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
//                "sm_count": 132, "driver_version": 13000},
//     "kiln_version": "0.1.0",
//     "kernels": [{
//       "kernel": "matmul_kernel",
//       "key": ["M", "N", "K"],            // the @triton.autotune key
//       "results": [{
//         "types": "*fp16, *fp16, *fp16, i32, i32, i32, ...",   // the overload
//         "key": [4096, 4096, 4096],       // the key arguments' values
//         "ranking": [                     // fastest first
//           {"config": "BLOCK_SIZE_M=128, ..., num_warps=8, num_stages=3",
//            "ms": 0.2031},
//           ...],
//         "rejected": [{"config": "...", "reason": "..."}]   // optional
//       }]
//     }]
//   }
//
// "config" strings are the configs as kiln describes them (every constexpr
// parameter's value, then num_warps and num_stages, and num_ctas when not
// 1); "types" is the overload's parameter types in order.

#ifndef KILN_TUNING_TABLE_H_
#define KILN_TUNING_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace kiln {

// The Kiln version tables record (keep in step with CMakeLists.txt's
// project(VERSION) and MODULE.bazel).
inline constexpr char kKilnVersion[] = "0.1.0";

// The GPU a table was measured on.
struct TuningDevice {
  // As cuDeviceGetName reports it, e.g. "NVIDIA H100 80GB HBM3".
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  // As cuDriverGetVersion reports it, e.g. 13000.
  int driver_version = 0;
};

// One config's measurement for one key.
struct RankedConfig {
  std::string config;
  // Median milliseconds of one launch.
  double ms = 0;
};

// A config measured but not eligible, with the reason (its output differed
// from the first config's, or it failed to launch).
struct RejectedConfig {
  std::string config;
  std::string reason;
};

// The measurements of one overload for one tuple of key values.
struct TuningResult {
  // The overload: its parameter types in order, joined by ", ".
  std::string types;
  std::vector<int64_t> key;
  // Fastest first; never empty.
  std::vector<RankedConfig> ranking;
  std::vector<RejectedConfig> rejected;
};

// The measurements of one kernel.
struct KernelTuning {
  std::string kernel;
  // The names of the @triton.autotune key arguments whose values `key`
  // holds, in order.
  std::vector<std::string> key;
  std::vector<TuningResult> results;
};

// A whole table: one device, several kernels.
struct TuningTable {
  TuningDevice device;
  std::string kiln_version;
  std::vector<KernelTuning> kernels;
};

// Parses and validates a table. `origin` (the file name) starts every error
// message, with the line and the field at fault:
//   "tuning/h100.json:12: kernels[0].results[3].ranking[0].ms: expected a
//    positive number, got a string"
// Unknown members are errors too (a misspelled field would otherwise be
// silently ignored). Checks: the format version, every field's type, key
// tuples as long as the kernel's key list, no kernel or (types, key) twice.
absl::StatusOr<TuningTable> ParseTuningTable(absl::string_view json,
                                             absl::string_view origin);

// The table as JSON, in the format above, deterministic (members in the
// order above, results in the order given), ending in a newline.
std::string WriteTuningTable(const TuningTable& table);

// How a call's key values matched a table's results.
enum class KeyMatchKind {
  // A result has exactly the call's key values.
  kExact,
  // No exact match: the result whose key is nearest after rounding every
  // value up to a power of two (TuningBucket), nearest first in buckets,
  // then in values.
  kNearestBucket,
  // No results to match.
  kNone,
};

struct KeyMatch {
  KeyMatchKind kind = KeyMatchKind::kNone;
  // Index of the matched result; -1 for kNone.
  int index = -1;
  // For kNearestBucket: the summed distance in powers of two (0 when the
  // result falls in the call's own bucket).
  int bucket_distance = 0;
};

// The bucket of a key value: the exponent of the smallest power of two >= v
// (as `triton.next_power_of_2(v)` rounds sizes), so 1000 and 1024 share one,
// 1025 is in the next. Values <= 0 form their own bucket, -1.
int TuningBucket(int64_t value);

// Matches `call` (key values) against `count` results whose keys
// `result_key(i)` gives (each as long as `call`): an exact match, else the
// nearest bucket; ties go to the earlier result. Deterministic and pure.
KeyMatch MatchTuningKey(
    absl::Span<const int64_t> call, int count,
    absl::FunctionRef<absl::Span<const int64_t>(int)> result_key);

}  // namespace kiln

#endif  // KILN_TUNING_TABLE_H_
