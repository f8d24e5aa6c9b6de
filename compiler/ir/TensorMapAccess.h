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

/// Whether TMA may use `tensorMap`: a kernel argument's (the launcher
/// encodes it) or one the kernel encodes (kiln.make_tensor_map).
bool isTmaReadyMap(mlir::Value tensorMap);

/// Records that a TMA access moves boxes `box` (outermost first) of
/// `tensorMap` through shared tiles swizzled by `swizzle` bytes, when the
/// kernel encodes that map: on its kiln.make_tensor_map. False when that
/// map is already shaped otherwise (the access must not use it). A kernel
/// argument's map is the caller's to record (true).
bool shapeTensorMap(mlir::Value tensorMap, llvm::ArrayRef<int64_t> box,
                    unsigned swizzle);

} // namespace kiln

#endif // KILN_IR_TENSORMAPACCESS_H
