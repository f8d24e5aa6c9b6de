// The runtime entry points that generated launchers call.
//
// Users call the typed `launch_<kernel>` functions that kiln-codegen
// generates; those check their arguments' alignment, pick a variant and call
// LaunchVariant. Nothing here is meant to be called directly.

#ifndef KILN_LAUNCH_H_
#define KILN_LAUNCH_H_

#include <cstdint>

#include "absl/status/status.h"
#include "kiln/cuda_stream.h"
#include "kiln/grid.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {

// Launches `variant` of `kernel` over `grid` on `stream`, with `args` pointing
// to the entry point's arguments in order (as cuLaunchKernel takes them).
//
// Uses the calling thread's current context, or device 0's primary context
// (made current) when there is none. On first use in a context it loads the
// cubin that fits the device; later launches there cost about one
// cuLaunchKernel. A program is a block of 32 * num_warps threads, with the
// image's dynamic shared memory; variants with num_ctas > 1 launch clusters of
// num_ctas programs along x (the grid's x extent is multiplied by num_ctas).
// A grid with a zero extent launches nothing and returns OK.
//
// Errors name the kernel, the variant and the cause: no driver or GPU, no
// cubin for the device's arch, a failed load or launch. The launch is
// asynchronous: faults inside the kernel surface at the next synchronization.
absl::Status LaunchVariant(const KernelInfo& kernel, const VariantInfo& variant,
                           Grid grid, CUstream stream, void** args);

// The status a generated launcher returns when its arguments satisfy no
// compiled variant's assumptions (only possible when no general variant was
// built); `requirement` says what the arguments lacked.
absl::Status NoMatchingVariant(const KernelInfo& kernel,
                               const char* requirement);

// True when `pointer` is 16-byte aligned, as a divisibility-16 pointer
// parameter requires.
inline bool IsAligned16(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
}

}  // namespace internal
}  // namespace kiln

#endif  // KILN_LAUNCH_H_
