#include "kiln/internal/global_scratch.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/mutex_lock.h"
#include "kiln/internal/relaxed_capture_mode.h"

namespace kiln {
namespace internal {
namespace {

static_assert(sizeof(size_t) >= sizeof(uint64_t),
              "scratch sizes are 64-bit and cuMemAlloc takes a size_t");

// A process-unique id of the calling thread, never reused (a thread's
// address or std::thread::id may be, while the dead thread's last launch
// still runs on its per-thread stream).
uint64_t ThreadId() {
  static std::atomic<uint64_t> next{1};
  thread_local const uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

}  // namespace

absl::StatusOr<CUdeviceptr> GlobalScratchCache::Get(uint64_t context_key,
                                                    CUstream stream,
                                                    uint64_t bytes) {
  const Key key(context_key, stream,
                stream == CU_STREAM_PER_THREAD ? ThreadId() : 0);
  MutexLock lock(&mu_);
  Buffer& buffer = buffers_[key];
  if (buffer.pointer != 0 && buffer.bytes >= bytes) return buffer.pointer;

  // Geometric growth: a sequence of ever larger launches allocates a few
  // times, not once per launch. (The old size was allocated, so doubling it
  // cannot overflow.)
  const uint64_t grown = std::max(bytes, 2 * buffer.bytes);
  const CudaDriver& d = *driver_;
  // The stream may be being captured into a graph; the allocation is no part
  // of it.
  const RelaxedCaptureMode relaxed(d);
  uint64_t size = grown;
  CUdeviceptr pointer = 0;
  CUresult result = d.mem_alloc(&pointer, size);
  if (result != CUDA_SUCCESS && grown > bytes) {
    // The headroom did not fit; the launch's own need may.
    size = bytes;
    result = d.mem_alloc(&pointer, size);
  }
  if (result != CUDA_SUCCESS) {
    if (buffer.pointer == 0) buffers_.erase(key);
    return CudaStatus(d, result,
                      absl::StrCat("cuMemAlloc of ", size,
                                   " bytes for the global scratch buffer"));
  }
  // Zeroed once, in stream order before the launch: the kernel writes every
  // byte it reads, but a warp's tensor-map copy (tensormap.cp_fenceproxy)
  // reads its destination first, which compute-sanitizer's initcheck would
  // report on fresh memory.
  result = d.memset_d8_async != nullptr
               ? d.memset_d8_async(pointer, 0, size, stream)
               : d.memset_d8(pointer, 0, size);
  if (result != CUDA_SUCCESS) {
    d.mem_free(pointer);
    if (buffer.pointer == 0) buffers_.erase(key);
    return CudaStatus(d, result,
                      absl::StrCat("zeroing the ", size,
                                   "-byte global scratch buffer"));
  }
  if (buffer.pointer != 0) retired_.push_back(buffer);
  buffer = Buffer{pointer, size};
  return pointer;
}

int GlobalScratchCache::buffers_allocated() const {
  MutexLock lock(&mu_);
  return static_cast<int>(buffers_.size() + retired_.size());
}

}  // namespace internal
}  // namespace kiln
