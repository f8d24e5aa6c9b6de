//===- TileRuns.h - shared tiles that keep one copy of each run ----------===//
//
// A tile loaded through pointers that repeat along a dimension (a packed
// int4 weight: eight rows of k read one word, `(k // 8) * stride`) needs
// only one row of each run in shared memory. kiln_gpu.async_copy and
// kiln_gpu.local_load may carry `kiln_gpu.runs`, one run length per
// dimension (a power of two): element i of the tensor lives at i / run of
// the tile, whose dimension is the tensor's divided by the run. The copy
// writes each place once (one thread of each run); every thread of a run
// reads it back. kiln-pipeline-dots sets it; the shared-memory lowering
// folds it into the layout (DistributedLayout.h's layoutOverRuns).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_TILERUNS_H
#define KILN_IR_TILERUNS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

namespace kiln {

inline constexpr llvm::StringLiteral kTileRunsAttr = "kiln_gpu.runs";

/// The run length of each of `rank` dimensions `op` names: all 1 without
/// the attribute.
inline llvm::SmallVector<int64_t> tileRuns(mlir::Operation *op,
                                           unsigned rank) {
  llvm::SmallVector<int64_t> runs(rank, 1);
  if (auto attr = op->getAttrOfType<mlir::DenseI32ArrayAttr>(kTileRunsAttr))
    for (auto [i, run] : llvm::enumerate(attr.asArrayRef()))
      if (i < rank)
        runs[i] = run;
  return runs;
}

/// Whether some dimension has a run longer than 1.
inline bool anyRun(llvm::ArrayRef<int64_t> runs) {
  return llvm::any_of(runs, [](int64_t run) { return run > 1; });
}

/// Sets `op`'s runs, one per dimension.
inline void setTileRuns(mlir::Operation *op, llvm::ArrayRef<int64_t> runs) {
  llvm::SmallVector<int32_t> narrow(runs.begin(), runs.end());
  op->setAttr(kTileRunsAttr,
              mlir::DenseI32ArrayAttr::get(op->getContext(), narrow));
}

/// Whether `tensorShape` is `tileShape` with each dimension times its run
/// (powers of two), as the attribute on `op` says; emits the error if not.
inline mlir::LogicalResult verifyTileRuns(mlir::Operation *op,
                                          llvm::ArrayRef<int64_t> tensorShape,
                                          llvm::ArrayRef<int64_t> tileShape) {
  auto attr = op->getAttrOfType<mlir::DenseI32ArrayAttr>(kTileRunsAttr);
  if (attr && attr.size() != int64_t(tensorShape.size()))
    return op->emitOpError("needs one run per dimension of the tensor");
  llvm::SmallVector<int64_t> runs = tileRuns(op, unsigned(tensorShape.size()));
  if (tileShape.size() != tensorShape.size())
    return op->emitOpError("the tile and the tensor differ in rank");
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i] < 1 || !llvm::isPowerOf2_64(uint64_t(runs[i])) ||
        tileShape[i] * runs[i] != tensorShape[i])
      return op->emitOpError("dimension ")
             << i << " of the tensor (" << tensorShape[i]
             << ") is not the tile's (" << tileShape[i] << ") times its run ("
             << runs[i] << ", a power of two)";
  return mlir::success();
}

} // namespace kiln

#endif // KILN_IR_TILERUNS_H
