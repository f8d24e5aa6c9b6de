// An optional hook that sees every launch made through generated launchers:
// for tracing, counting or profiling without touching the call sites.
//
//   void Log(const kiln::LaunchEvent& e, void*) {
//     std::printf("%s [%s] on %s: %s\n", e.kernel->name, e.variant->name,
//                 e.image != nullptr ? e.image->arch : "-",
//                 e.status.ToString().c_str());
//   }
//   kiln::SetLaunchObserver(&Log, nullptr);
//
// Without an observer a launch pays one atomic load and a predictable branch.

#ifndef KILN_LAUNCH_OBSERVER_H_
#define KILN_LAUNCH_OBSERVER_H_

#include "absl/status/status.h"
#include "kiln/cuda_stream.h"
#include "kiln/grid.h"
#include "kiln/kernel_info.h"

namespace kiln {

// One launch, as the observer sees it.
struct LaunchEvent {
  // The kernel and the variant the launcher chose.
  const KernelInfo* kernel;
  const VariantInfo* variant;
  // The image launched (its arch and format say what ran), or null when the
  // launch failed before one was chosen.
  const CubinImage* image;
  // The grid in programs (before any num_ctas multiplication) and the stream.
  Grid grid;
  CUstream stream;
  // What the launcher returns. OK means queued, not finished.
  absl::Status status;
};

// Called on the launching thread after each launch, before the launcher
// returns; `user_data` is what SetLaunchObserver was given. It must be
// thread-safe when launches happen on several threads, and must not launch.
using LaunchObserver = void (*)(const LaunchEvent& event, void* user_data);

// Makes `observer` (with `user_data`) the process-wide launch observer, or
// removes it when `observer` is null. Thread-safe; launches already under way
// may still call the previous observer. Meant to be set rarely: each call
// keeps a few bytes for the life of the process.
void SetLaunchObserver(LaunchObserver observer, void* user_data);

}  // namespace kiln

#endif  // KILN_LAUNCH_OBSERVER_H_
