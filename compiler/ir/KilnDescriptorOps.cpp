//===- KilnDescriptorOps.cpp - tensor descriptors -------------------------===//
#include "compiler/ir/Dialects.h"

using namespace mlir;

namespace {

RankedTensorType blockTypeOf(Value desc) {
  return cast<kiln::TensorDescType>(desc.getType()).getBlockType();
}

/// One offset per dimension of the descriptor's block.
LogicalResult verifyOffsets(Operation *op, Value desc, ValueRange offsets) {
  if (int64_t(offsets.size()) != blockTypeOf(desc).getRank())
    return op->emitOpError("needs one offset per dimension of the block (")
           << blockTypeOf(desc).getRank() << "), got " << offsets.size();
  return success();
}

/// A stored or combined value has the descriptor's block type.
LogicalResult verifyBlockValue(Operation *op, Value desc, Value value) {
  if (value.getType() != blockTypeOf(desc))
    return op->emitOpError("value type ")
           << value.getType() << " is not the descriptor's block type "
           << blockTypeOf(desc);
  return success();
}

} // namespace

LogicalResult kiln::MakeTensorDescOp::verify() {
  RankedTensorType block = blockTypeOf(getResult());
  size_t rank = block.getRank();
  if (rank < 1 || rank > 5)
    return emitOpError("descriptors have rank 1 to 5, got ") << rank;
  if (getShape().size() != rank || getStrides().size() != rank)
    return emitOpError("shape and strides need ")
           << rank << " entries each (the block's rank)";
  if (cast<PointerType>(getBase().getType()).getPointeeType() !=
      block.getElementType())
    return emitOpError("the block's element type must be the base's pointee");
  return success();
}

LogicalResult kiln::DescriptorLoadOp::verify() {
  if (failed(verifyOffsets(*this, getDesc(), getOffsets())))
    return failure();
  if (getResult().getType() != blockTypeOf(getDesc()))
    return emitOpError("result type ")
           << getResult().getType() << " is not the descriptor's block type "
           << blockTypeOf(getDesc());
  return success();
}

LogicalResult kiln::DescriptorStoreOp::verify() {
  if (failed(verifyOffsets(*this, getDesc(), getOffsets())))
    return failure();
  return verifyBlockValue(*this, getDesc(), getValue());
}

LogicalResult kiln::DescriptorReduceOp::verify() {
  if (failed(verifyOffsets(*this, getDesc(), getOffsets())) ||
      failed(verifyBlockValue(*this, getDesc(), getValue())))
    return failure();
  if (getKind() == RMWOp::Xchg)
    return emitOpError("xchg is not a reduction");
  Type element = blockTypeOf(getDesc()).getElementType();
  if (isa<FloatType>(element) && getKind() != RMWOp::FAdd &&
      getKind() != RMWOp::Max && getKind() != RMWOp::Min)
    return emitOpError("floats take fadd, max or min, got ")
           << stringifyRMWOp(getKind());
  if (!isa<FloatType>(element) && getKind() == RMWOp::FAdd)
    return emitOpError("fadd needs floats, got ") << element;
  return success();
}
