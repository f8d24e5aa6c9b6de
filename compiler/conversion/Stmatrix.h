//===- Stmatrix.h - storing 16-bit fragments with stmatrix ------*- C++ -*-===//
//
// `stmatrix.sync.aligned.m8n8.x4` stores four 8x8 matrices of 16-bit
// elements per warp instruction, each lane naming one 16-byte row: a quarter
// of the instructions of 4-byte stores for the mma and wgmma accumulators.
// Both the layout exchange through shared memory and local_store into
// nvmma_shared tiles use it where the destination gives every lane's eight
// elements one aligned 16-byte chunk.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_STMATRIX_H
#define KILN_CONVERSION_STMATRIX_H

#include "compiler/layout/LinearLayout.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace kiln {

/// Of matrix m, lane l holds the pair at row l/4, columns 2(l%4) and
/// 2(l%4)+1, in its register m; lane 8m+i names the address of matrix m's
/// row i. Given a writer `access` (hardware dimensions to any outputs) whose
/// register bit 0 and lane bits 0-1 walk the columns of such a matrix and
/// lane bits 2-4 its rows (the mma and wgmma accumulators do), this is the
/// access as the instruction performs it: each lane moves a vector of 8
/// registers (the row: register bit 0, lane bits 0 and 1), its lane bits 0-2
/// pick the row (lane bits 2-4 before) and bits 3-4 the matrix (register
/// bits 1-2 before); higher registers, warps and blocks keep their bases.
/// Instruction j then stores registers 8j..8j+7 of the original order,
/// matrix m holding the pair 8j+2m, 8j+2m+1 (emitStmatrix).
///
/// With `transposed` (.trans), each matrix is stored column by column: the
/// 16 bytes lane 8m+i names hold matrix m's column i, so the vector is the
/// column (lane bits 2-4 before) and lane bits 0-2 pick it (register bit 0,
/// lane bits 0-1 before).
///
/// Whether the destination really gives each vector one aligned 16-byte
/// chunk is the caller's to check. std::nullopt for fewer than 8 registers
/// or 32 lanes.
std::optional<layout::LinearLayout>
stmatrixWriter(const layout::LinearLayout &access, bool transposed);

/// One stmatrix.x4 of registers `elements[0..8)` (16-bit values, in the
/// original register order stmatrixWriter describes) to this lane's row at
/// `sharedAddress` (a 32-bit shared-window address).
void emitStmatrix(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::Value sharedAddress, mlir::ValueRange elements,
                  bool transposed);

} // namespace kiln

#endif // KILN_CONVERSION_STMATRIX_H
