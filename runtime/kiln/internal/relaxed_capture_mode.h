// Internal: a scope in which the calling thread's stream-capture mode is
// relaxed.
//
// A first launch may come while a stream is being captured into a CUDA graph,
// and the driver then refuses calls that are unsafe during capture
// (cuModuleLoadData, cuMemAlloc) unless the thread's mode is relaxed. The
// runtime's loads and allocations add nothing to the graph, so relaxing the
// mode around them is safe; only the launch is captured.

#ifndef KILN_INTERNAL_RELAXED_CAPTURE_MODE_H_
#define KILN_INTERNAL_RELAXED_CAPTURE_MODE_H_

#include <cuda.h>

#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace internal {

// Makes the calling thread's stream-capture mode relaxed while it lives, and
// restores the previous mode on destruction. Does nothing with a driver
// without cuThreadExchangeStreamCaptureMode.
class RelaxedCaptureMode {
 public:
  explicit RelaxedCaptureMode(const CudaDriver& d) : d_(d) {
    if (d_.thread_exchange_stream_capture_mode != nullptr) {
      exchanged_ =
          d_.thread_exchange_stream_capture_mode(&mode_) == CUDA_SUCCESS;
    }
  }
  ~RelaxedCaptureMode() {
    if (exchanged_) d_.thread_exchange_stream_capture_mode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  const CudaDriver& d_;
  CUstreamCaptureMode mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool exchanged_ = false;
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_RELAXED_CAPTURE_MODE_H_
