// What kernels a program contains and what each would run on this GPU.
//
// Every kernel that kiln-codegen generated and the program links is listed;
// kiln/kernel_info.h describes the tables (variants, images, registers, shared
// memory), and kiln/describe.h prints them for people.

#ifndef KILN_INTROSPECTION_H_
#define KILN_INTROSPECTION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kiln/kernel_info.h"

namespace kiln {

// Every generated kernel linked into the program, in no particular order
// (registered when the program starts; kernels of a library loaded later
// appear once it is loaded).
std::vector<const KernelInfo*> RegisteredKernels();

// The registered kernel named `name` (the @triton.jit function's name); the
// first found when several targets compile kernels of that name. NotFound
// when there is none.
absl::StatusOr<const KernelInfo*> FindKernel(absl::string_view name);

// The image of `variant` that a launch would load on a device of compute
// capability major.minor: an exact cubin, else a binary-compatible one (same
// major, lower minor, no 'a' suffix), else embedded PTX for an arch the device
// can JIT. NotFound, listing the built archs and the device's, when none fits.
absl::StatusOr<const CubinImage*> ImageForDevice(const VariantInfo& variant,
                                                 int major, int minor);

// ImageForDevice for the device of the calling thread's context (see
// kiln::CurrentDevice); an error when there is no driver or GPU.
absl::StatusOr<const CubinImage*> ImageForCurrentDevice(
    const VariantInfo& variant);

}  // namespace kiln

#endif  // KILN_INTROSPECTION_H_
