// Internal: the CUDA context that the runtime's calls use.

#ifndef KILN_INTERNAL_CONTEXT_H_
#define KILN_INTERNAL_CONTEXT_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace internal {

// Returns the calling thread's current context. When there is none, retains
// the primary context of device 0 and makes it current first, as the CUDA
// runtime API would; that reference is never released, so the context lives
// as long as the process.
absl::StatusOr<CUcontext> CurrentOrPrimaryContext(const CudaDriver& driver);

// The current context's device and its compute capability.
struct DeviceCapability {
  CUdevice device = 0;
  int major = 0;
  int minor = 0;
};
absl::StatusOr<DeviceCapability> CurrentDeviceCapability(
    const CudaDriver& driver);

// The context that work on `stream` belongs to, current for the life of the
// scope. A stream belongs to a context, which need not be the thread's
// current one (a stream made on another device, say): then that context is
// pushed, and popped on destruction, so that what is loaded, allocated or
// recorded for the stream lives where the stream runs. A null stream, the
// legacy and per-thread default stream handles (which belong to no context)
// and a driver without cuStreamGetCtx mean the current context, or device 0's
// primary one when the thread has none (CurrentOrPrimaryContext).
class StreamContextScope {
 public:
  StreamContextScope(const CudaDriver& driver, CUstream stream);
  ~StreamContextScope();
  StreamContextScope(const StreamContextScope&) = delete;
  StreamContextScope& operator=(const StreamContextScope&) = delete;

  // OK, or why no context could be found or made current.
  const absl::Status& status() const { return status_; }
  // The stream's context, current while the scope lives; null unless ok().
  CUcontext context() const { return context_; }

 private:
  const CudaDriver& driver_;
  absl::Status status_;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_CONTEXT_H_
