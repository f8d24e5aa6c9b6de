//===- Elementwise.h - ops that combine elements position by position ----===//
//
// Layout assignment and the chained-dot analysis walk through such ops: an
// elementwise op's result is where its operands are, element for element.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_ELEMENTWISE_H
#define KILN_IR_ELEMENTWISE_H

#include "compiler/ir/Dialects.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {

/// Ops that combine elements at the same position only: no regions (but
/// a map_elementwise's function), no memory effects, every tensor operand
/// and result of one shape.
inline bool isElementwise(mlir::Operation *op) {
  if ((op->getNumRegions() != 0 && !mlir::isa<MapElementwiseOp>(op)) ||
      !mlir::isMemoryEffectFree(op) || op->getNumResults() == 0 ||
      mlir::isa<DotOp>(op))
    return false;
  std::optional<llvm::ArrayRef<int64_t>> shape;
  for (mlir::Type type : llvm::concat<mlir::Type>(
           llvm::SmallVector<mlir::Type>(op->getOperandTypes()),
           llvm::SmallVector<mlir::Type>(op->getResultTypes()))) {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor)
      continue;
    if (shape && *shape != tensor.getShape())
      return false;
    shape = tensor.getShape();
  }
  return shape.has_value();
}

} // namespace kiln

#endif // KILN_IR_ELEMENTWISE_H
