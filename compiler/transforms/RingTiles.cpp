//===- RingTiles.cpp - tiles of shared rings and the dots that read them --===//
#include "compiler/transforms/RingTiles.h"

using namespace mlir;

namespace kiln {

gpu::MemDescType ringType(RankedTensorType operand, unsigned stages,
                          bool transposed) {
  Type element = operand.getElementType();
  int64_t lineBytes = operand.getShape()[transposed ? 0 : 1] *
                      (element.getIntOrFloatBitWidth() / 8);
  unsigned swizzle = unsigned(std::min<int64_t>(128, lineBytes));
  SmallVector<int64_t> shape{int64_t(stages)};
  llvm::append_range(shape, operand.getShape());
  return gpu::MemDescType::get(operand.getContext(), shape, element,
                               gpu::NVMMASharedEncodingAttr::get(
                                   operand.getContext(), swizzle, transposed));
}

gpu::MemDescType tileType(gpu::MemDescType ring) {
  return gpu::MemDescType::get(ring.getContext(), ring.getShape().drop_front(),
                               ring.getElementType(), ring.getEncoding());
}

Value tileOf(OpBuilder &b, Location loc, Value ring, Value slot) {
  return gpu::MemDescIndexOp::create(
      b, loc, tileType(cast<gpu::MemDescType>(ring.getType())), ring, slot);
}

Value readView(OpBuilder &b, Location loc, Value tile, bool transposed) {
  if (!transposed)
    return tile;
  return gpu::MemDescTransOp::create(
      b, loc,
      gpu::MemDescTransOp::transposedType(
          cast<gpu::MemDescType>(tile.getType())),
      tile);
}

gpu::MemDescType barrierRingType(MLIRContext *ctx, unsigned stages) {
  return gpu::MemDescType::get(
      ctx, {int64_t(stages), 1, 1}, IntegerType::get(ctx, 64),
      gpu::NVMMASharedEncodingAttr::get(ctx, 0, false));
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
