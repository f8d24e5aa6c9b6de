// Internal: which of a variant's cubins runs on a given device.
//
// A cubin built for sm_XY runs on devices of compute capability X.Z with
// Z >= Y (binary compatibility within a major version); one built for the
// architecture-specific target sm_XYa runs on compute capability X.Y only; one
// built for the family target sm_XYf on X.Z with Z >= Y. Nothing runs across
// major versions. PTX is embedded only when the build opted in; it is chosen
// only when no cubin fits, and then the driver JIT-compiles it. Without it, a
// device no cubin fits is an error. Pure functions, testable without a GPU.

#ifndef KILN_INTERNAL_IMAGE_SELECTION_H_
#define KILN_INTERNAL_IMAGE_SELECTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {

// A GPU architecture as ptxas names it, e.g. "sm_90a" = {9, 0, 'a'}.
struct Arch {
  int major = 0;
  int minor = 0;
  // '\0' for a plain target, 'a' architecture-specific, 'f' family.
  char suffix = '\0';
};

// Parses "sm_<major><minor>[a|f]", the minor being the last digit:
// "sm_80" -> 8.0, "sm_120a" -> 12.0 'a'. InvalidArgument otherwise.
absl::StatusOr<Arch> ParseArch(absl::string_view name);

// The plain architecture name of a compute capability: (8, 6) -> "sm_86".
std::string ArchName(int major, int minor);

// Returns the index in `images` of the cubin to load on a device of compute
// capability major.minor. Preference: an exact architecture-specific match
// (sm_90a on 9.0), then another exact match (sm_90, sm_90f), then the
// compatible cubin of the highest lower minor version (sm_80 or sm_80f on
// 8.6). When no cubin fits, the PTX of the newest arch the device can JIT
// (sm_XY PTX for any compute capability >= X.Y; sm_XYa PTX for X.Y only).
// Among equals, the first listed wins. Images whose arch does not parse are
// never chosen. When none fits, NotFound with a message that names the
// device's arch and lists every built arch.
absl::StatusOr<int> SelectImage(int major, int minor,
                                absl::Span<const CubinImage> images);

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_IMAGE_SELECTION_H_
