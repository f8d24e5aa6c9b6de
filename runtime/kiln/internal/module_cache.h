// Internal: loads each variant's cubin once per CUDA context.

#ifndef KILN_INTERNAL_MODULE_CACHE_H_
#define KILN_INTERNAL_MODULE_CACHE_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/variant_cache.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {

class ModuleCache;

// A variant's entry point, loaded in one context. Immutable once published,
// and alive as long as the ModuleCache that made it.
struct LoadedFunction {
  const ModuleCache* owner;
  // Identifies the context: see ModuleCache::ContextKey.
  uint64_t context_key;
  CUcontext context;
  CUfunction function;
  // The cubin it came from: its arch and the shared memory to request.
  const CubinImage* image;
};

// Loads each variant's chosen cubin at most once per context and remembers
// the function. Thread-safe. A lookup for the context that last used the
// variant takes no lock (it reads the variant's VariantCache); anything else
// takes the cache's mutex, and the first use in a context also queries the
// device, picks the cubin (see image_selection.h), loads it and raises the
// function's dynamic shared memory limit when it asks for more than 48 KiB.
// A first use inside CUDA graph capture works: the load runs with the
// thread's capture mode relaxed, and only the launch is captured.
// Modules are never unloaded: they live until their context is destroyed.
class ModuleCache {
 public:
  // Uses `driver` for every call; it must outlive the cache.
  explicit ModuleCache(const CudaDriver* driver) : driver_(driver) {}
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // A key that identifies `context` for the life of the process: its
  // cuCtxGetId where the driver has it (a destroyed context's address may be
  // reused), else its address.
  uint64_t ContextKey(CUcontext context) const {
    unsigned long long id = 0;  // NOLINT(runtime/int): the driver's type
    if (driver_->ctx_get_id != nullptr &&
        driver_->ctx_get_id(context, &id) == CUDA_SUCCESS) {
      return id;
    }
    return reinterpret_cast<uintptr_t>(context);
  }

  // The function this cache loaded most recently for `variant`, if it belongs
  // to the context with `context_key`; else null. Lock-free.
  const LoadedFunction* Lookup(const VariantInfo& variant,
                               uint64_t context_key) const {
    const LoadedFunction* last =
        variant.cache->last.load(std::memory_order_acquire);
    if (last != nullptr && last->context_key == context_key &&
        last->owner == this) {
      return last;
    }
    return nullptr;
  }

  // Returns `variant`'s function in `context`, loading the cubin for the
  // context's device if this is the first use there. `context` must be
  // current on the calling thread and `context_key` must be
  // ContextKey(context). Errors (no cubin fits the device, the driver refuses
  // the image, too much shared memory) name the cause but not the variant.
  absl::StatusOr<const LoadedFunction*> Load(const VariantInfo& variant,
                                             CUcontext context,
                                             uint64_t context_key)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The number of modules loaded so far.
  int modules_loaded() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::StatusOr<std::unique_ptr<LoadedFunction>> LoadLocked(
      const VariantInfo& variant, CUcontext context, uint64_t context_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CudaDriver* const driver_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::pair<const VariantInfo*, uint64_t>,
                      std::unique_ptr<LoadedFunction>>
      functions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_MODULE_CACHE_H_
