// Internal: the runtime entry points that generated launchers call.
//
// Users call the typed `launch_<kernel>` functions that kiln-codegen
// generates; those check their config and arguments (alignment, divisibility,
// arguments equal to 1), pick a variant and call LaunchVariant. Only
// generated .cc files include this header.

#ifndef KILN_INTERNAL_LAUNCH_H_
#define KILN_INTERNAL_LAUNCH_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "kiln/cuda_stream.h"
#include "kiln/grid.h"
#include "kiln/internal/tensor_descriptor_args.h"  // IWYU pragma: export
#include "kiln/internal/tuning_cache.h"            // IWYU pragma: export
#include "kiln/internal/variant_cache.h"           // IWYU pragma: export
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {

// Launches `variant` of `kernel` over `grid` on `stream`, with `args` pointing
// to the entry point's arguments in order (as cuLaunchKernel takes them).
//
// Uses the calling thread's current context, or device 0's primary context
// (made current) when there is none. On first use in a context it loads the
// image that fits the device; later launches there cost about one
// cuLaunchKernel. A program is a block of 32 * num_warps threads, with the
// image's dynamic shared memory; variants with num_ctas > 1 launch clusters of
// num_ctas programs along x (the grid's x extent is multiplied by num_ctas).
// When the variant's entry point takes a global scratch pointer
// (VariantInfo::global_scratch_arg), the launch points that slot of `args`
// at the device address of a buffer of the image's global_scratch_bytes per
// program, kept per stream (kiln/internal/global_scratch.h), or at a null
// address when the image needs none.
// A grid with a zero extent launches nothing and returns OK. When a launch
// observer is set (kiln/launch_observer.h) it is called before returning.
//
// Errors name the kernel, the variant and the cause: no driver or GPU, no
// image for the device's arch, a failed load, allocation or launch. The launch
// is asynchronous: faults inside the kernel surface at the next
// synchronization.
absl::Status LaunchVariant(const KernelInfo& kernel, const VariantInfo& variant,
                           Grid grid, CUstream stream, void** args);

// The status a generated launcher returns when its arguments satisfy no
// compiled variant's assumptions (only possible when no general variant was
// built); `requirement` says what the arguments lacked.
absl::Status NoMatchingVariant(const KernelInfo& kernel,
                               const char* requirement);

// The status a generated launcher returns when `argument`, which every
// variant compiled with the caller's config takes equal to 1 (`:1` in the
// specialization), has another `value`.
absl::Status ArgumentNotOne(const KernelInfo& kernel, const char* argument,
                            const std::string& value);

// The status a generated launcher returns when `argument`, a constexpr
// element of a tuple parameter ("stride[1]") that every variant compiled
// with the caller's config has the value `expected`, has another `value`.
absl::Status ArgumentNotCompiledValue(const KernelInfo& kernel,
                                      const char* argument,
                                      const std::string& value,
                                      const char* expected);

// The status a generated launcher returns when the caller's config matches
// none compiled for the argument types `types`; `compiled` lists those.
absl::Status NoMatchingConfig(const KernelInfo& kernel, const char* types,
                              const char* compiled);

// The status of a tuned launch asked for a config position its overload
// does not have (a tuning table or kiln-tune out of step with the build).
absl::Status NoSuchTuningPosition(const KernelInfo& kernel, int overload,
                                  int position);

// True when `pointer` is 16-byte aligned, as a divisibility-16 pointer
// parameter requires.
inline bool IsAligned16(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
}

// Whether two config texts (a string or dtype constexpr) are equal; null
// equals only null.
inline bool SameText(const char* a, const char* b) {
  return a == b || (a != nullptr && b != nullptr && std::strcmp(a, b) == 0);
}

// The number of modules (one per variant and context) the process-wide
// module cache has loaded so far; 0 without a driver. For tests.
int ModulesLoaded();

// Adds a kernel to kiln::RegisteredKernels(); generated code defines one per
// kernel, at namespace scope.
class KernelRegistration {
 public:
  explicit KernelRegistration(const KernelInfo& kernel);
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_LAUNCH_H_
