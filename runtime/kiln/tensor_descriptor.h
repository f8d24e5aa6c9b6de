// kiln::TensorDescriptor: a strided tensor in device memory and the block
// shape a kernel moves it in, the argument of a `tensordesc<...>` kernel
// parameter (upstream Triton's host-side TensorDescriptor).
//
//   // A row-major M x K fp16 matrix, loaded in 128 x 64 blocks.
//   kiln::TensorDescriptor<kiln::half, 2> a(a_ptr, {M, K}, {K, 1}, {128, 64});
//   absl::Status s = kernels::launch_matmul_tma(grid, stream, a, b, c, M, N,
//   K);
//
// It is a small value type that only records what it is given: nothing is
// checked or allocated when it is made, and no CUDA call is needed. The
// generated launcher checks it against the compiled kernel (its block shape
// must be the one the chosen config was compiled for) and against what the
// hardware's tensor maps need, which upstream's TensorDescriptor asserts too:
// the base 16-byte aligned, every stride but the last a multiple of 16
// bytes, the last stride 1, every extent positive and below 2^31. A bad one
// is an InvalidArgument status naming the kernel and the argument. Where the
// compiled kernel reads a CUDA tensor map (TMA), the launcher encodes it
// with the driver, once per distinct descriptor (the encodings are cached).

#ifndef KILN_TENSOR_DESCRIPTOR_H_
#define KILN_TENSOR_DESCRIPTOR_H_

#include <array>
#include <cstdint>

#include "kiln/float_types.h"

namespace kiln {

// The largest rank a tensor descriptor may have (that of CUDA tensor maps).
inline constexpr int kMaxTensorDescriptorRank = 5;

// The element types of descriptors: `name` is the type's name in kernel
// signatures ("fp16"). Defined for the types that typed kernel pointers use.
template <typename T>
struct TensorElement;
#define KILN_TENSOR_ELEMENT(type, type_name)       \
  template <>                                      \
  struct TensorElement<type> {                     \
    static constexpr const char* name = type_name; \
  }
KILN_TENSOR_ELEMENT(int8_t, "i8");
KILN_TENSOR_ELEMENT(int16_t, "i16");
KILN_TENSOR_ELEMENT(int32_t, "i32");
KILN_TENSOR_ELEMENT(int64_t, "i64");
KILN_TENSOR_ELEMENT(uint8_t, "u8");
KILN_TENSOR_ELEMENT(uint16_t, "u16");
KILN_TENSOR_ELEMENT(uint32_t, "u32");
KILN_TENSOR_ELEMENT(uint64_t, "u64");
KILN_TENSOR_ELEMENT(half, "fp16");
KILN_TENSOR_ELEMENT(bfloat16, "bf16");
KILN_TENSOR_ELEMENT(float, "fp32");
KILN_TENSOR_ELEMENT(double, "fp64");
KILN_TENSOR_ELEMENT(float8_e4m3, "fp8e4nv");
KILN_TENSOR_ELEMENT(float8_e5m2, "fp8e5");
#undef KILN_TENSOR_ELEMENT

// Any TensorDescriptor, seen through plain pointers into it; valid while the
// descriptor it came from lives. What launchers pass to the runtime.
struct TensorDescriptorView {
  const void* base;
  int rank;
  const int64_t* shape;        // elements, outermost dimension first
  const int64_t* strides;      // elements
  const int32_t* block_shape;  // elements
  int element_bytes;
  const char* dtype;  // as in signatures: "fp16"
};

// A tensor of `T`s at `base` in device memory, with `Rank` dimensions of
// extents `shape` and `strides` (in elements, outermost first), moved in
// blocks of `block_shape`.
template <typename T, int Rank>
class TensorDescriptor {
 public:
  static_assert(Rank >= 1 && Rank <= kMaxTensorDescriptorRank,
                "tensor descriptors have 1 to 5 dimensions");
  using element_type = T;
  static constexpr int kRank = Rank;

  TensorDescriptor(T* base, const std::array<int64_t, Rank>& shape,
                   const std::array<int64_t, Rank>& strides,
                   const std::array<int32_t, Rank>& block_shape)
      : base_(base),
        shape_(shape),
        strides_(strides),
        block_shape_(block_shape) {}

  // A row-major (C-contiguous) tensor: the last stride is 1 and each other
  // one the product of the extents after it.
  static TensorDescriptor RowMajor(
      T* base, const std::array<int64_t, Rank>& shape,
      const std::array<int32_t, Rank>& block_shape) {
    std::array<int64_t, Rank> strides;
    int64_t stride = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= shape[d];
    }
    return TensorDescriptor(base, shape, strides, block_shape);
  }

  T* base() const { return base_; }
  const std::array<int64_t, Rank>& shape() const { return shape_; }
  const std::array<int64_t, Rank>& strides() const { return strides_; }
  const std::array<int32_t, Rank>& block_shape() const { return block_shape_; }

  TensorDescriptorView view() const {
    return TensorDescriptorView{base_,
                                Rank,
                                shape_.data(),
                                strides_.data(),
                                block_shape_.data(),
                                static_cast<int>(sizeof(T)),
                                TensorElement<T>::name};
  }

 private:
  T* base_;
  std::array<int64_t, Rank> shape_;
  std::array<int64_t, Rank> strides_;
  std::array<int32_t, Rank> block_shape_;
};

}  // namespace kiln

#endif  // KILN_TENSOR_DESCRIPTOR_H_
