//===- KilnMemoryOps.cpp - atomics and block pointers ---------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/ir/TensorMapAccess.h"

using namespace mlir;

#include "compiler/ir/KilnEnums.cpp.inc"

namespace {
ArrayRef<int64_t> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

/// Atomics: values of the pointee type, mask and values shaped like `ptr`.
LogicalResult verifyAtomic(Operation *op, Type ptrType, Type valueType,
                           Value mask) {
  auto pointer = cast<kiln::PointerType>(kiln::getElementTypeOrSelf(ptrType));
  if (kiln::getElementTypeOrSelf(valueType) != pointer.getPointeeType())
    return op->emitOpError("value type ")
           << valueType << " does not match pointee type "
           << pointer.getPointeeType();
  if (shapeOf(valueType) != shapeOf(ptrType))
    return op->emitOpError("value and pointer shapes differ");
  if (mask && shapeOf(mask.getType()) != shapeOf(ptrType))
    return op->emitOpError("mask and pointer shapes differ");
  unsigned bits = pointer.getPointeeType().getIntOrFloatBitWidth();
  if (bits != 16 && bits != 32 && bits != 64)
    return op->emitOpError("atomics need 16-, 32- or 64-bit elements");
  return success();
}
} // namespace

namespace {
LogicalResult verifySameShape(Operation *op, Type a, Type b) {
  if (shapeOf(a) != shapeOf(b) ||
      isa<RankedTensorType>(a) != isa<RankedTensorType>(b))
    return op->emitOpError("operand and result shapes differ");
  return success();
}
} // namespace

LogicalResult kiln::PtrCastOp::verify() {
  return verifySameShape(*this, getSrc().getType(), getResult().getType());
}

LogicalResult kiln::PtrToIntOp::verify() {
  if (kiln::getElementTypeOrSelf(getResult().getType())
          .getIntOrFloatBitWidth() != 64)
    return emitOpError("the result must be i64");
  return verifySameShape(*this, getSrc().getType(), getResult().getType());
}

LogicalResult kiln::IntToPtrOp::verify() {
  if (kiln::getElementTypeOrSelf(getSrc().getType()).getIntOrFloatBitWidth() !=
      64)
    return emitOpError("the operand must be i64");
  return verifySameShape(*this, getSrc().getType(), getResult().getType());
}

LogicalResult kiln::MakeBlockPtrOp::verify() {
  RankedTensorType block =
      cast<BlockPointerType>(getResult().getType()).getTensorType();
  size_t rank = block.getRank();
  if (getShape().size() != rank || getStrides().size() != rank ||
      getOffsets().size() != rank || getOrder().size() != rank)
    return emitOpError("shape, strides, offsets and order need ")
           << rank << " entries each (the block's rank)";
  SmallVector<bool> seen(rank, false);
  for (int32_t d : getOrder()) {
    if (d < 0 || size_t(d) >= rank || seen[d])
      return emitOpError("order must be a permutation of 0..") << rank - 1;
    seen[d] = true;
  }
  if (cast<PointerType>(getBase().getType()).getPointeeType() !=
      block.getElementType())
    return emitOpError("the block's element type must be the base's pointee");
  return success();
}

LogicalResult kiln::AdvanceOp::verify() {
  auto type = cast<BlockPointerType>(getPtr().getType());
  if (int64_t(getOffsets().size()) != type.getTensorType().getRank())
    return emitOpError("needs one offset per dimension of the block");
  return success();
}

LogicalResult kiln::AtomicRMWOp::verify() {
  if (failed(verifyAtomic(*this, getPtr().getType(), getVal().getType(),
                          getMask())))
    return failure();
  if (failed(kiln::verifyTensorMapOperands(
          *this, getTensorMap(), getBoxOffsets(), getVal().getType(), "value")))
    return failure();
  Type element = kiln::getElementTypeOrSelf(getVal().getType());
  bool isFloat = isa<FloatType>(element);
  switch (getRmwOp()) {
  case RMWOp::FAdd:
    if (!isFloat)
      return emitOpError("fadd needs floating-point values");
    break;
  case RMWOp::Xchg:
    break;
  case RMWOp::Max:
  case RMWOp::Min:
    break; // integers signed, floats by value
  case RMWOp::And:
  case RMWOp::Or:
  case RMWOp::Xor:
    break; // integers, or the bits of floats
  case RMWOp::Add:
  case RMWOp::UMax:
  case RMWOp::UMin:
    if (isFloat)
      return emitOpError(stringifyRMWOp(getRmwOp())) << " needs integer values";
    break;
  }
  return success();
}

LogicalResult kiln::AtomicCASOp::verify() {
  return verifyAtomic(*this, getPtr().getType(), getVal().getType(), Value());
}

LogicalResult kiln::MakeTensorMapOp::verify() {
  size_t rank = getShape().size();
  if (rank < 1 || rank > 5 || getStrides().size() != rank)
    return emitOpError("needs one to five extents and as many strides");
  if (!isa<kiln::PointerType>(getBase().getType()) ||
      !isa<kiln::PointerType>(getScratch().getType()))
    return emitOpError("the base and the scratch buffer are scalar pointers");
  if (std::optional<ArrayRef<int64_t>> box = getBox()) {
    if (box->size() != rank)
      return emitOpError("the box needs one extent per dimension");
    // TMA moves boxes of at most 256 elements along each dimension.
    if (llvm::any_of(*box, [](int64_t n) { return n < 1 || n > 256; }))
      return emitOpError("box extents must lie in [1, 256]");
  }
  if (std::optional<uint32_t> swizzle = getSwizzle())
    if (*swizzle != 0 && *swizzle != 32 && *swizzle != 64 && *swizzle != 128)
      return emitOpError("the swizzle is 0, 32, 64 or 128 bytes");
  if (std::optional<uint64_t> offset = getScratchOffset())
    if (*offset % 128 != 0)
      return emitOpError("a tensor map's scratch offset is a multiple of 128");
  return success();
}

bool kiln::isTmaReadyMap(Value tensorMap) {
  return tensorMap && (isa<BlockArgument>(tensorMap) ||
                       tensorMap.getDefiningOp<kiln::MakeTensorMapOp>());
}

bool kiln::shapeTensorMap(Value tensorMap, ArrayRef<int64_t> box,
                          unsigned swizzle) {
  auto make = tensorMap.getDefiningOp<kiln::MakeTensorMapOp>();
  if (!make)
    return isa<BlockArgument>(tensorMap);
  if (make.getBoxAttr())
    return make.getBoxAttr().asArrayRef() == box &&
           make.getSwizzle() == std::optional<uint32_t>(swizzle);
  Builder b(make.getContext());
  make.setBoxAttr(b.getDenseI64ArrayAttr(box));
  make.setSwizzleAttr(b.getI32IntegerAttr(int32_t(swizzle)));
  return true;
}
