//===- RingTiles.cpp - tiles of shared rings and the dots that read them --===//
#include "compiler/transforms/RingTiles.h"

#include "compiler/ir/Elementwise.h"

#include "mlir/IR/TypeUtilities.h"

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

Value beforeConversions(Value value) {
  while (auto convert = value.getDefiningOp<gpu::ConvertLayoutOp>())
    value = convert.getSrc();
  return value;
}

void storeOperandTile(OpBuilder &b, Location loc, Value operand, Value tile) {
  // The casts after the transpose, outermost first.
  SmallVector<Operation *> casts;
  Value v = operand;
  while (Operation *def = v.getDefiningOp()) {
    // (A square transpose, or a conversion, has one shape too; packed
    // inline asm and functions take elements in the runs their layout
    // was given.)
    if (def->getNumOperands() != 1 || def->getNumResults() != 1 ||
        def->getNumRegions() != 0 ||
        isa<TransOp, gpu::ConvertLayoutOp, InlineAsmElementwiseOp>(def) ||
        !isElementwise(def))
      break;
    casts.push_back(def);
    v = def->getOperand(0);
  }
  auto trans = v.getDefiningOp<TransOp>();
  auto tileType = cast<gpu::MemDescType>(tile.getType());
  Value held = trans ? beforeConversions(trans.getSrc()) : Value();
  if (!trans || held == trans.getSrc() ||
      trans.getOrder() != ArrayRef<int32_t>{1, 0} ||
      !isa<gpu::NVMMASharedEncodingAttr>(tileType.getEncoding())) {
    gpu::LocalStoreOp::create(b, loc, operand, tile);
    return;
  }
  auto heldType = cast<RankedTensorType>(held.getType());
  for (Operation *cast : llvm::reverse(casts)) {
    Type element = mlir::getElementTypeOrSelf(cast->getResult(0).getType());
    Operation *copy = b.clone(*cast);
    copy->setOperand(0, held);
    copy->getResult(0).setType(heldType.clone(element));
    held = copy->getResult(0);
  }
  gpu::LocalStoreOp::create(b, loc, held, readView(b, loc, tile, true));
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
