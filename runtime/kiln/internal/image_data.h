// The bytes the driver loads for an image: the stored ones, or, for an image
// the build compressed (`compress = "zstd"`), the inflated ones.

#ifndef KILN_INTERNAL_IMAGE_DATA_H_
#define KILN_INTERNAL_IMAGE_DATA_H_

#include "absl/status/statusor.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {

// Returns the image's loadable bytes. A compressed image is inflated once per
// process, at its first call, through libzstd.so.1 loaded with dlopen
// (`zstd_library`, for tests); the result is kept for the process's life and
// later calls return it. Thread-safe. Errors say which image, and why:
// libzstd missing, a corrupt frame, a size other than the recorded one.
absl::StatusOr<const unsigned char*> ImageData(
    const CubinImage& image, const char* zstd_library = "libzstd.so.1");

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_IMAGE_DATA_H_
