//===- MatrixRows.h - accesses as stmatrix and ldmatrix do them -*- C++ -*-===//
//
// stmatrix.x4 and ldmatrix.x4 move four 8x8 matrices of 16-bit elements per
// warp instruction, each lane naming one 16-byte row. Given an access of a
// layout whose registers and lanes walk those matrices (the mma and wgmma
// accumulators), this is the same access as the instruction performs it:
// each lane moving a vector of eight registers. The exchange through shared
// memory and local_store plan their arrays against it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_MATRIXROWS_H
#define KILN_LAYOUT_MATRIXROWS_H

#include "compiler/layout/LinearLayout.h"

#include <optional>

namespace kiln::layout {

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
/// matrix m holding the pair 8j+2m, 8j+2m+1 (kiln::emitStmatrix;
/// kiln::emitLdmatrix reads them back in the same order).
///
/// With `transposed` (.trans), each matrix is stored column by column: the
/// 16 bytes lane 8m+i names hold matrix m's column i, so the vector is the
/// column (lane bits 2-4 before) and lane bits 0-2 pick it (register bit 0,
/// lane bits 0-1 before).
///
/// Whether the destination really gives each vector one aligned 16-byte
/// chunk is the caller's to check. std::nullopt for fewer than 8 registers
/// or 32 lanes.
std::optional<LinearLayout> matrixRowsAccess(const LinearLayout &access,
                                             bool transposed);

} // namespace kiln::layout

#endif // KILN_LAYOUT_MATRIXROWS_H
