//===- Stmatrix.h - 16-bit fragments by stmatrix and ldmatrix ---*- C++ -*-===//
//
// `stmatrix.sync.aligned.m8n8.x4` stores four 8x8 matrices of 16-bit
// elements per warp instruction, each lane naming one 16-byte row: a quarter
// of the instructions of 4-byte stores for the mma and wgmma accumulators.
// Both the layout exchange through shared memory and local_store into
// nvmma_shared tiles use it where the destination gives every lane's eight
// elements one aligned 16-byte chunk. `ldmatrix` is its mirror image (same
// lanes, rows and registers): the exchange reads a tensor into an
// accumulator's layout with it, one address a lane per eight registers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_STMATRIX_H
#define KILN_CONVERSION_STMATRIX_H

#include "mlir/IR/Builders.h"

namespace kiln {

/// One stmatrix.x4 of registers `elements[0..8)` (16-bit values, in the
/// original register order layout::matrixRowsAccess describes) to this lane's
/// row at `sharedAddress` (a 32-bit shared-window address).
void emitStmatrix(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::Value sharedAddress, mlir::ValueRange elements,
                  bool transposed);

/// One ldmatrix.x`count` (1, 2 or 4; .trans with `transposed`) from this
/// lane's row at `sharedAddress` (a 32-bit shared-window address): the
/// 32-bit word it hands this thread of each matrix (thread T: word T % 4
/// of row T / 4, the fragment of a tf32 mma.sync operand).
llvm::SmallVector<mlir::Value, 4>
emitLdmatrixWords(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::Value sharedAddress, int64_t count, bool transposed);

/// One ldmatrix.x4 (.trans with `transposed`) from this lane's row at
/// `sharedAddress` (a 32-bit shared-window address): eight 16-bit values of
/// type `element`, in the original register order layout::matrixRowsAccess
/// describes (the reader's view of a layout is the writer's: ldmatrix fills the
/// registers stmatrix stores).
llvm::SmallVector<mlir::Value, 8>
emitLdmatrix(mlir::OpBuilder &b, mlir::Location loc, mlir::Value sharedAddress,
             mlir::Type element, bool transposed);

} // namespace kiln

#endif // KILN_CONVERSION_STMATRIX_H
