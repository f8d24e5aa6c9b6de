//===- RingTiles.h - tiles of shared rings and the dots that read them ----===//
//
// What kiln-pipeline-dots and the warp-specialized form (WarpSpecialize.cpp)
// both do when a dot's operand becomes a tile of a shared ring: index the
// ring, pick the shared dot's precision, and drop the operand's old path.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_RINGTILES_H
#define KILN_TRANSFORMS_RINGTILES_H

#include "compiler/ir/Dialects.h"

namespace kiln {

/// A ring of `stages` shared tiles for a dot operand of type `operand`:
/// lines along its contiguous dimension (the last, or the first when
/// `transposed`), swizzled by as many bytes as a line has (up to 128).
gpu::MemDescType ringType(mlir::RankedTensorType operand, unsigned stages,
                          bool transposed);

/// One tile of a ring (a buffer whose leading dimension is the slot).
gpu::MemDescType tileType(gpu::MemDescType ring);

/// The tile of `ring` at `slot`.
mlir::Value tileOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ring,
                   mlir::Value slot);

/// `tile` as a dot reads it: a transposed view when `transposed`.
mlir::Value readView(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tile,
                     bool transposed);

/// A ring of `stages` mbarriers, one per slot.
gpu::MemDescType barrierRingType(mlir::MLIRContext *ctx, unsigned stages);

/// The precision a shared_dot replacing `dot` names: fp32 operands other
/// than plain tf32 keep their emulation; none otherwise.
InputPrecisionAttr sharedDotPrecision(DotOp dot);

/// `value` before the layout conversions that lead to it: what a
/// local_store can write as well.
mlir::Value beforeConversions(mlir::Value value);

/// Writes `operand`, a dot operand computed in registers, into its staging
/// `tile`. A transpose of a value another layout holds (`tl.trans(ds).to(
/// tl.bfloat16)` of an accumulator: kiln-assign-layouts converts it to a
/// blocked layout first), possibly cast element by element after, is
/// written as that value is held into the tile's transposed view: the
/// conversion's trip through shared memory goes.
void storeOperandTile(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value operand, mlir::Value tile);

/// Erases the layout conversions and transposes that led to a dot operand
/// the dot no longer reads, up to the first one something else reads.
void eraseOperandPath(mlir::Value operand);

} // namespace kiln

#endif // KILN_TRANSFORMS_RINGTILES_H
