//===- BlockAccess.h - pointers and bounds masks of strided blocks --------===//
//
// A block pointer (tl.make_block_ptr) and a tensor descriptor
// (tl.make_tensor_descriptor) both name a block of a strided tensor in
// global memory: base pointer, the tensor's shape and strides, the block's
// offsets. Their fallback lowerings turn an access into an ordinary one on
// the tensor of pointers base + sum_d (offset_d + arange(0, B_d)) * stride_d,
// computed in i64 and masked by 0 <= offset_d + i_d < shape_d. This builds
// that code, in the shape a kernel writes by hand
// (`offs_m[:, None] * stride_m + offs_n[None, :]`), so that axis info proves
// the dimension of stride 1 contiguous and its accesses vectorize.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_BLOCKACCESS_H
#define KILN_TRANSFORMS_BLOCKACCESS_H

#include "compiler/ir/Dialects.h"

#include "mlir/IR/Builders.h"

namespace kiln {

/// The scalars that locate a block: base pointer, the tensor's shape and
/// strides (i64, in elements), the block's offsets (i32).
struct BlockPointerParts {
  mlir::Value base;
  llvm::SmallVector<mlir::Value> shape, strides, offsets;
};

/// Builds the index tensors, pointers and masks of one block access.
class BlockAccessBuilder {
public:
  BlockAccessBuilder(mlir::OpBuilder &b, mlir::Location loc,
                     const BlockPointerParts &parts,
                     mlir::RankedTensorType block)
      : b(b), loc(loc), parts(parts), block(block),
        indicesByDim(block.getRank()) {}

  /// offset_d + arange(0, B_d) in i64, shaped [1, ..., B_d, ..., 1] so that
  /// it broadcasts along every other dimension.
  mlir::Value indicesAlong(unsigned d);

  /// The tensor of pointers base + sum_d indices_d * stride_d.
  mlir::Value pointers();

  /// The AND over `dims` of 0 <= indices_d < shape_d; null when `dims` is
  /// empty (nothing to check).
  mlir::Value inBounds(llvm::ArrayRef<int32_t> dims);

  /// The value out-of-bounds elements read as under `padding`.
  mlir::Value padValue(PaddingOption padding);

private:
  mlir::Value buildIndicesAlong(unsigned d);
  /// `v` broadcast from its [1, .., B_d, .., 1] shape to the block's.
  mlir::Value broadcast(mlir::Value v);

  mlir::OpBuilder &b;
  mlir::Location loc;
  const BlockPointerParts &parts;
  mlir::RankedTensorType block;
  llvm::SmallVector<mlir::Value> indicesByDim; // built on first use
};

} // namespace kiln

#endif // KILN_TRANSFORMS_BLOCKACCESS_H
