// Internal: the per-variant memo behind the runtime's cheap launch path.
// Generated code defines one per variant; nothing else should touch it.

#ifndef KILN_INTERNAL_VARIANT_CACHE_H_
#define KILN_INTERNAL_VARIANT_CACHE_H_

#include <atomic>

namespace kiln {
namespace internal {

struct LoadedFunction;  // defined in kiln/internal/module_cache.h

// The function that the module cache loaded most recently for one variant,
// with the context it belongs to. Launches that find their context here skip
// the cache's lock. Zero-initialized (a static of this type needs no
// constructor to run), and only the module cache reads or writes it.
struct VariantCache {
  std::atomic<const LoadedFunction*> last{nullptr};
};

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_VARIANT_CACHE_H_
