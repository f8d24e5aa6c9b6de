// Internal: a descriptor argument packed into the kernel ABI.
//
// A `tensordesc<T[d0,...]>` parameter of rank R is 2 + 2R entry-point
// parameters (docs/architecture.md, "Tensor descriptors"): a 128-byte,
// 64-byte-aligned CUtensorMap by value, the base address, the extents (i32
// each) and the strides (i64 each, in elements). Generated launchers pack a
// kiln::TensorDescriptor into a TensorDescriptorArgs with
// PackTensorDescriptor and pass the addresses of its fields.

#ifndef KILN_INTERNAL_TENSOR_DESCRIPTOR_ARGS_H_
#define KILN_INTERNAL_TENSOR_DESCRIPTOR_ARGS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "kiln/kernel_info.h"
#include "kiln/tensor_descriptor.h"

namespace kiln {
namespace internal {

// The bytes of a CUtensorMap (cuda.h), as the entry point takes them.
struct alignas(64) TensorMapBytes {
  unsigned char bytes[128];
};

// The entry-point arguments of one descriptor parameter of rank `Rank`.
template <int Rank>
struct TensorDescriptorArgs {
  TensorMapBytes tensor_map;
  const void* base;
  int32_t shape[Rank];
  int64_t strides[Rank];
};

// What a compiled variant expects of a descriptor argument: generated from
// its metadata, one per descriptor parameter and config.
struct TensorDescriptorParam {
  const char* name;   // the parameter
  const char* dtype;  // its element type, "fp16"
  int rank;
  const int32_t* block_shape;  // outermost first
  // When the variant reads the tensor map (TMA): the box it was compiled for
  // (outermost first) and the shared-memory swizzle in bytes (0, 32, 64,
  // 128). Null when it does not; the tensor map is then zeros.
  const int32_t* box;
  int swizzle_bytes;
};

// Checks `desc` against `param` and what tensor maps need (rank, element
// type and block shape as compiled; base 16-byte aligned; extents in
// [1, 2^31); strides positive multiples of 16 bytes below 2^40 bytes, the
// last 1) and fills the ABI arguments; when the variant reads the tensor
// map, encodes it with cuTensorMapEncodeTiled through the process-wide
// driver, caching encodings. Errors are InvalidArgument statuses naming the
// kernel, the argument and the expectation (a failed encoding: the driver's
// status, annotated the same way).
absl::Status PackTensorDescriptor(const KernelInfo& kernel,
                                  const TensorDescriptorParam& param,
                                  const TensorDescriptorView& desc,
                                  TensorMapBytes* tensor_map, const void** base,
                                  int32_t* shape, int64_t* strides);

template <int Rank>
absl::Status PackTensorDescriptor(const KernelInfo& kernel,
                                  const TensorDescriptorParam& param,
                                  const TensorDescriptorView& desc,
                                  TensorDescriptorArgs<Rank>& args) {
  return PackTensorDescriptor(kernel, param, desc, &args.tensor_map, &args.base,
                              args.shape, args.strides);
}

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_TENSOR_DESCRIPTOR_ARGS_H_
