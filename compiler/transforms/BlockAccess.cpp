//===- BlockAccess.cpp - pointers and bounds masks of strided blocks ------===//
#include "compiler/transforms/BlockAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;

Value kiln::BlockAccessBuilder::indicesAlong(unsigned d) {
  if (!indicesByDim[d])
    indicesByDim[d] = buildIndicesAlong(d);
  return indicesByDim[d];
}

Value kiln::BlockAccessBuilder::pointers() {
  Value sum;
  for (unsigned d = 0; d < block.getRank(); ++d) {
    Value indices = indicesAlong(d);
    Value stride =
        kiln::SplatOp::create(b, loc, indices.getType(), parts.strides[d]);
    Value term = broadcast(arith::MulIOp::create(b, loc, indices, stride));
    sum = sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
  }
  auto ptrType = RankedTensorType::get(block.getShape(), parts.base.getType());
  Value base = kiln::SplatOp::create(b, loc, ptrType, parts.base);
  return kiln::AddPtrOp::create(b, loc, ptrType, base, sum);
}

Value kiln::BlockAccessBuilder::inBounds(ArrayRef<int32_t> dims) {
  Value mask;
  for (int32_t d : dims) {
    Value indices = indicesAlong(d);
    auto type = cast<RankedTensorType>(indices.getType());
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(0)));
    Value bound = kiln::SplatOp::create(b, loc, type, parts.shape[d]);
    // One statement per op: argument evaluation order is unspecified, and
    // the IR must not depend on the compiler kilnc was built with.
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        indices, bound);
    Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                        indices, zero);
    Value inside = arith::AndIOp::create(b, loc, above, below);
    inside = broadcast(inside);
    mask =
        mask ? arith::AndIOp::create(b, loc, mask, inside).getResult() : inside;
  }
  return mask;
}

Value kiln::BlockAccessBuilder::padValue(kiln::PaddingOption padding) {
  Type element = block.getElementType();
  TypedAttr value;
  if (auto f = dyn_cast<FloatType>(element))
    value = b.getFloatAttr(f, padding == kiln::PaddingOption::NaN
                                  ? APFloat::getNaN(f.getFloatSemantics())
                                  : APFloat::getZero(f.getFloatSemantics()));
  else
    value = b.getIntegerAttr(element, 0);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(block, value));
}

Value kiln::BlockAccessBuilder::buildIndicesAlong(unsigned d) {
  int64_t size = block.getDimSize(d);
  Type i64 = b.getI64Type();
  auto rangeType = RankedTensorType::get({size}, b.getI32Type());
  auto indexType = RankedTensorType::get({size}, i64);
  Value range = kiln::MakeRangeOp::create(b, loc, rangeType, 0, int32_t(size));
  Value offset = arith::ExtSIOp::create(b, loc, i64, parts.offsets[d]);
  // One statement per op (see inBounds()).
  Value widened = arith::ExtSIOp::create(b, loc, indexType, range);
  Value start = kiln::SplatOp::create(b, loc, indexType, offset);
  Value result = arith::AddIOp::create(b, loc, start, widened);
  for (unsigned axis = 0; axis < block.getRank(); ++axis) {
    if (axis == d)
      continue;
    auto shape =
        llvm::to_vector(cast<RankedTensorType>(result.getType()).getShape());
    shape.insert(shape.begin() + axis, 1);
    result = kiln::ExpandDimsOp::create(
        b, loc, RankedTensorType::get(shape, i64), result, axis);
  }
  return result;
}

Value kiln::BlockAccessBuilder::broadcast(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == block.getShape())
    return v;
  return kiln::BroadcastOp::create(
      b, loc, RankedTensorType::get(block.getShape(), type.getElementType()),
      v);
}
