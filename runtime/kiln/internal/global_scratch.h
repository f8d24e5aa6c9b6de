// Internal: the device buffers behind kernels' global scratch parameter.
//
// A kernel whose metadata has "global_scratch_bytes" takes one hidden
// parameter after all the others: a pointer to global_scratch_bytes bytes for
// each program (CTA) of the launch, the CTA with linear id
// ctaid.x + ctaid.y * nctaid.x + ctaid.z * nctaid.x * nctaid.y owning bytes
// [id * global_scratch_bytes, (id + 1) * global_scratch_bytes). The kernel
// writes there what it must keep in global memory for itself (device-made
// TMA descriptors), so nothing survives the launch.
//
// Launches on one stream run one after another, so they can share a buffer;
// launches on different streams may overlap, so each stream has its own.

#ifndef KILN_INTERNAL_GLOBAL_SCRATCH_H_
#define KILN_INTERNAL_GLOBAL_SCRATCH_H_

#include <cuda.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"

namespace kiln {
namespace internal {

// One scratch buffer per (context, stream), grown as launches need. Thread-
// safe. A buffer is never freed: when a launch needs more, a bigger one
// (twice the old size at least) replaces it and the old one is retired but
// kept, since a launch already issued, or a CUDA graph captured earlier, may
// still use it. Buffers live until their context is destroyed.
//
// A graph captured on a stream keeps the buffer that stream had then; like
// the stream's later launches, its replays must not overlap the stream's
// other work that uses the buffer (replay it on that stream).
class GlobalScratchCache {
 public:
  // Uses `driver` for every call; it must outlive the cache.
  explicit GlobalScratchCache(const CudaDriver* driver) : driver_(driver) {}
  GlobalScratchCache(const GlobalScratchCache&) = delete;
  GlobalScratchCache& operator=(const GlobalScratchCache&) = delete;

  // A device buffer of at least `bytes` bytes (> 0) for launches on `stream`
  // in the calling thread's current context, whose ModuleCache::ContextKey
  // is `context_key` (it tells a new context from a destroyed one at the
  // same address). The per-thread default stream handle
  // (CU_STREAM_PER_THREAD) is a different stream on each thread, and so has
  // a buffer per thread. Allocates (in relaxed stream-capture mode) only when
  // the stream's buffer is smaller. Errors name cuMemAlloc, the size and the
  // cause.
  absl::StatusOr<CUdeviceptr> Get(uint64_t context_key, CUstream stream,
                                  uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);

  // The number of buffers allocated so far, retired ones included. For
  // tests.
  int buffers_allocated() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // (context key, stream, thread id for the per-thread stream, else 0).
  using Key = std::tuple<uint64_t, CUstream, uint64_t>;
  struct Buffer {
    CUdeviceptr pointer = 0;
    uint64_t bytes = 0;
  };

  const CudaDriver* const driver_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Buffer> buffers_ ABSL_GUARDED_BY(mu_);
  // Replaced buffers, kept alive (see the class comment).
  std::vector<Buffer> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_GLOBAL_SCRATCH_H_
