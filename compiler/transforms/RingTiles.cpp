//===- RingTiles.cpp - tiles of shared rings and the dots that read them --===//
#include "compiler/transforms/RingTiles.h"

using namespace mlir;

namespace kiln {

gpu::MemDescType tileType(gpu::MemDescType ring) {
  return gpu::MemDescType::get(ring.getContext(), ring.getShape().drop_front(),
                               ring.getElementType(), ring.getEncoding());
}

Value tileOf(OpBuilder &b, Location loc, Value ring, Value slot) {
  return gpu::MemDescIndexOp::create(
      b, loc, tileType(cast<gpu::MemDescType>(ring.getType())), ring, slot);
}

InputPrecisionAttr sharedDotPrecision(DotOp dot) {
  if (!dot.getA().getType().getElementType().isF32() ||
      dot.getInputPrecision() == InputPrecision::TF32)
    return {};
  return InputPrecisionAttr::get(dot.getContext(), dot.getInputPrecision());
}

void eraseOperandPath(Value operand) {
  while (
      isa_and_nonnull<gpu::ConvertLayoutOp, TransOp>(operand.getDefiningOp())) {
    Operation *def = operand.getDefiningOp();
    operand = def->getOperand(0);
    if (!def->use_empty())
      return;
    def->erase();
  }
}

} // namespace kiln
