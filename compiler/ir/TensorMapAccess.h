//===- TensorMapAccess.h - the tensor-map operands of memory ops ---------===//
//
// kiln.load, kiln.store and kiln.atomic_rmw may carry a kernel argument's
// tensor map (kiln-lower-tensor-descriptors keeps it for TMA) with the box
// offsets of the access. One check for all three.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_TENSORMAPACCESS_H
#define KILN_IR_TENSORMAPACCESS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace kiln {

/// A tensor map needs one box offset per dimension of the tensor accessed
/// (`role`: "result" or "value"), and box offsets need a tensor map.
inline mlir::LogicalResult verifyTensorMapOperands(mlir::Operation *op,
                                                   mlir::Value tensorMap,
                                                   mlir::ValueRange boxOffsets,
                                                   mlir::Type accessed,
                                                   llvm::StringRef role) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(accessed);
  if (tensorMap && (!tensor || boxOffsets.size() != size_t(tensor.getRank())))
    return op->emitOpError("a tensor map needs one box offset per dimension "
                           "of a tensor ")
           << role;
  if (!tensorMap && !boxOffsets.empty())
    return op->emitOpError("box offsets need a tensor map");
  return mlir::success();
}

} // namespace kiln

#endif // KILN_IR_TENSORMAPACCESS_H
