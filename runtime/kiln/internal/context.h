// Internal: the CUDA context that the runtime's calls use.

#ifndef KILN_INTERNAL_CONTEXT_H_
#define KILN_INTERNAL_CONTEXT_H_

#include <cuda.h>

#include "absl/status/statusor.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace internal {

// Returns the calling thread's current context. When there is none, retains
// the primary context of device 0 and makes it current first, as the CUDA
// runtime API would; that reference is never released, so the context lives
// as long as the process.
absl::StatusOr<CUcontext> CurrentOrPrimaryContext(const CudaDriver& driver);

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_CONTEXT_H_
