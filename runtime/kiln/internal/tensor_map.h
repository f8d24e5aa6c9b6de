// Internal: checking descriptor arguments and encoding their CUDA tensor
// maps, with the driver and cache passed in so that tests can use fakes.
//
// PackTensorDescriptor (kiln/internal/tensor_descriptor_args.h) is
// PackTensorDescriptorWith over the process-wide driver and cache.

#ifndef KILN_INTERNAL_TENSOR_MAP_H_
#define KILN_INTERNAL_TENSOR_MAP_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kiln/internal/cuda_driver.h"
#include "kiln/internal/tensor_descriptor_args.h"
#include "kiln/kernel_info.h"
#include "kiln/tensor_descriptor.h"

namespace kiln {
namespace internal {

// The arguments of one cuTensorMapEncodeTiled call, in the driver's order of
// dimensions (innermost first). Interleave is none, element strides 1, L2
// promotion 128 bytes, out-of-bounds fill zero.
struct TensorMapRequest {
  CUtensorMapDataType data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  int rank = 0;
  const void* address = nullptr;
  cuuint64_t dims[kMaxTensorDescriptorRank] = {};
  cuuint64_t strides_bytes[kMaxTensorDescriptorRank - 1] = {};  // dims 1..
  cuuint32_t box[kMaxTensorDescriptorRank] = {};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;

  friend bool operator==(const TensorMapRequest& a, const TensorMapRequest& b);
  template <typename H>
  friend H AbslHashValue(H h, const TensorMapRequest& r) {
    h = H::combine(std::move(h), r.data_type, r.rank, r.address, r.swizzle);
    for (int d = 0; d < r.rank; ++d) {
      h = H::combine(std::move(h), r.dims[d], r.box[d]);
    }
    for (int d = 0; d + 1 < r.rank; ++d) {
      h = H::combine(std::move(h), r.strides_bytes[d]);
    }
    return h;
  }
};

// Encoded tensor maps by request, thread-safe. Holds at most `capacity`
// encodings; when full, it starts over (a program cycling through more
// distinct descriptors than that re-encodes them).
class TensorMapCache {
 public:
  explicit TensorMapCache(size_t capacity = 4096) : capacity_(capacity) {}

  // The tensor map of `request`: cached, or encoded by `driver` (whose
  // cuTensorMapEncodeTiled must be resolved) and cached. Failed encodings are
  // not cached.
  absl::StatusOr<TensorMapBytes> Get(const CudaDriver& driver,
                                     const TensorMapRequest& request);

  // Calls of cuTensorMapEncodeTiled made, and encodings held.
  int encodes() const;
  size_t size() const;

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<TensorMapRequest, TensorMapBytes> maps_
      ABSL_GUARDED_BY(mu_);
  int encodes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Does what PackTensorDescriptor documents, encoding with the driver that
// `driver` returns (called only when the variant reads the tensor map) and
// caching in `cache`.
absl::Status PackTensorDescriptorWith(
    absl::FunctionRef<absl::StatusOr<const CudaDriver*>()> driver,
    TensorMapCache& cache, const KernelInfo& kernel,
    const TensorDescriptorParam& param, const TensorDescriptorView& desc,
    TensorMapBytes* tensor_map, const void** base, int32_t* shape,
    int64_t* strides);

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_TENSOR_MAP_H_
