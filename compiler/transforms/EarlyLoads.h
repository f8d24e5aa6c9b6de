//===- EarlyLoads.h - loads moved to an earlier iteration of a loop -------===//
//
// What kiln-pipeline-dots (the index loads of a gather, run ahead with the
// load stage) and kiln-prefetch-loads (small loads issued iterations
// early) both need: whether the loop lets a load move, whether its address
// can be computed ahead, what its value reaches, the induction variable
// some iterations on, and the load masked off where the iteration it now
// serves lies past the loop's end.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_EARLYLOADS_H
#define KILN_TRANSFORMS_EARLYLOADS_H

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace kiln {

/// Whether the loop may write memory `load` reads, so that the load moved
/// to an earlier iteration could miss a write it must see: a store or an
/// atomic through a pointer computed (by offsets) from the load's kernel
/// argument, or from one not known; a barrier ordering other threads'
/// writes; an op whose effects are unknown. Stores and atomics through
/// another kernel argument do not count: kernel arguments are taken not to
/// overlap, as the pipeliner's rings already take them (and upstream
/// Triton's pipeliner does): FLA's chunk_h stores each chunk's state to h
/// while it reads the chunk's decays from g. The pipeline's own
/// shared-memory ops (the kiln_gpu dialect), prints and asserts do not
/// count, nor do loads, volatile ones too (they write nothing), except a
/// volatile load in a loop nested in `loop`: it may spin on a flag another
/// block sets after writing what the load reads.
bool writesMemoryReadBy(mlir::scf::ForOp loop, LoadOp load);

/// The same for `op` and the ops inside it (kiln-stage-dots: the ops
/// between a load and the wait for its copy).
bool mayWriteMemoryReadBy(mlir::Operation *op, LoadOp load);

/// The ops of the loop body that `load`'s operands are computed from (in
/// body order), closed over the carried values they read: the computation
/// to clone for a later iteration. None when one of them is not pure
/// arithmetic (an op with memory effects or regions).
std::optional<llvm::SmallVector<mlir::Operation *>>
aheadAddressSlice(LoadOp load);

/// Whether a use that `accepts` is reached from `value` through the ops
/// computed from it (their results, transitively); uses that `stops` are
/// not followed further.
bool reaches(mlir::Value value,
             llvm::function_ref<bool(mlir::OpOperand &)> accepts,
             llvm::function_ref<bool(mlir::OpOperand &)> stops);

/// A copy of `load` at `b`'s insertion point, its operands looked up in
/// `mapping`, its mask and-ed with `inRange` (an i1, splat over a tensor
/// load) and its `other` zero where it had none.
mlir::Value loadMaskedBy(mlir::OpBuilder &b, LoadOp load, mlir::Value inRange,
                         mlir::IRMapping &mapping);

/// iv + k * step, created at `b` (iv itself for k = 0): the induction
/// variable of the iteration k steps on.
mlir::Value ivPlus(mlir::OpBuilder &b, mlir::Location loc, mlir::Value iv,
                   mlir::Value step, int64_t k);

} // namespace kiln

#endif // KILN_TRANSFORMS_EARLYLOADS_H
