// kiln-tune: measures every compiled config of autotuned kernels over the
// shapes of a spec (kiln/tune/spec.h) on the current GPU, and writes a tuning
// table (kiln/tuning_table.h) that the target's `tuning_tables` embeds.
//
// Each `triton_kernel` target built with autotune gets a tuner program,
// `<name>_tune` (Bazel: `bazel run //pkg:<name>_tune -- ...`; CMake: the
// target `<name>_tune`), whose main() is generated:
//
//   int main(int argc, char** argv) {
//     return kiln::tune::TuneMain(kernels::matmul_kernels(), argc, argv);
//   }
//
// so a tuner is the kernel library plus this one: nothing to write. Usage:
//
//   <name>_tune --spec shapes.json --out tuning/h100.json
//               [--kernel NAME] [--warmup-ms 25] [--rep-ms 100] [--no-flush]
//               [--rounds 1] [--merge]
//
// Per shape and config it launches once on zeroed outputs, compares every
// output with the first config's (a config whose output differs, or that
// fails, is reported and ranked out), then times it as upstream's
// triton.testing.do_bench does (kiln::Benchmark: warm-up, L2 flush before
// each repetition, CUDA events, median). With --rounds N every config that
// passed is timed N times, the configs taken in turn, and ranked by the
// median of its rounds, so that a drift of the clocks over a shape's
// measurements does not decide between close configs. Progress goes to
// stderr, a summary table to stdout.

#ifndef KILN_TUNE_TUNE_MAIN_H_
#define KILN_TUNE_TUNE_MAIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/kernel_info.h"
#include "kiln/tune/spec.h"

namespace kiln {
namespace tune {

// Runs kiln-tune over `kernels` with the command line `argv`; returns the
// process exit status (0 when the table was written).
int TuneMain(const std::vector<const KernelInfo *> &kernels, int argc,
             char **argv);

// How kiln-tune makes one launch's arguments for one shape: checked against
// the kernel before any GPU work.
struct ArgumentPlan {
  // Into KernelTuningInfo::overloads.
  int overload = 0;
  // Per kernel parameter, in order.
  struct Param {
    std::string name;
    std::string type; // "*fp16", "i32", ...
    ArgSpec spec;
    // For buffers: bytes per element.
    int element_bytes = 0;
  };
  std::vector<Param> params;
};

// Checks `spec` against `kernel` (built with autotune; the overload named by
// spec.types, else the first; an entry in "args" for every parameter, a
// buffer for every pointer, no entry for a parameter the kernel lacks, at
// least one output). Errors name the kernel and the argument.
absl::StatusOr<ArgumentPlan> PlanArguments(const KernelInfo &kernel,
                                           const KernelSpec &spec);

} // namespace tune
} // namespace kiln

#endif // KILN_TUNE_TUNE_MAIN_H_
