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
/// and result of one shape. Ops that move elements between positions are
/// not, though their shapes may agree: a transpose of a square tile (an
/// int4 weight unpacked, then `tl.trans(b)`), a gather whose index has the
/// source's shape, a histogram with as many bins as values.
inline bool isElementwise(mlir::Operation *op) {
  if ((op->getNumRegions() != 0 && !mlir::isa<MapElementwiseOp>(op)) ||
      !mlir::isMemoryEffectFree(op) || op->getNumResults() == 0 ||
      mlir::isa<DotOp, TransOp, GatherOp, HistogramOp>(op))
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
