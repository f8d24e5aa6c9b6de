//===- KilnComputeOps.cpp - element-wise extras and the dot ---------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/ir/ElementTypes.h"

using namespace mlir;

namespace {
ArrayRef<int64_t> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

/// Element-wise ops: every tensor operand and result has one shape, and
/// scalars appear only when everything is scalar.
LogicalResult verifySameShape(Operation *op, TypeRange operands,
                              TypeRange results) {
  std::optional<ArrayRef<int64_t>> shape;
  bool anyTensor = false, anyScalar = false;
  for (Type t : llvm::concat<const Type>(operands, results)) {
    if (isa<RankedTensorType>(t))
      anyTensor = true;
    else
      anyScalar = true;
    if (!shape)
      shape = shapeOf(t);
    else if (*shape != shapeOf(t))
      return op->emitOpError("operands and results must share one shape");
  }
  if (anyTensor && anyScalar)
    return op->emitOpError("operands and results must share one shape");
  return success();
}
} // namespace

LogicalResult kiln::ExternElementwiseOp::verify() {
  if (getSymbol().empty())
    return emitOpError("needs a function symbol");
  return verifySameShape(*this, getSrcs().getTypes(), getResult().getType());
}

void kiln::ExternElementwiseOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getPure())
    return;
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

LogicalResult kiln::InlineAsmElementwiseOp::verify() {
  if (getResults().empty())
    return emitOpError("needs at least one result");
  return verifySameShape(*this, getArgs().getTypes(), getResults().getTypes());
}

void kiln::InlineAsmElementwiseOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getPure())
    return;
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

LogicalResult kiln::DotOp::verify() {
  auto a = getA().getType(), b = getB().getType(), c = getC().getType();
  int64_t rank = a.getRank();
  if ((rank != 2 && rank != 3) || b.getRank() != rank || c.getRank() != rank)
    return emitOpError("operands must all be 2-D or all be 3-D, got ranks ")
           << a.getRank() << ", " << b.getRank() << " and " << c.getRank();
  int64_t m = a.getDimSize(rank - 2), k = a.getDimSize(rank - 1);
  int64_t kb = b.getDimSize(rank - 2), n = b.getDimSize(rank - 1);
  if (k != kb)
    return emitOpError("K differs: a is ")
           << m << "x" << k << ", b is " << kb << "x" << n;
  if (c.getDimSize(rank - 2) != m || c.getDimSize(rank - 1) != n)
    return emitOpError("the accumulator must be ") << m << "x" << n;
  if (rank == 3 && (b.getDimSize(0) != a.getDimSize(0) ||
                    c.getDimSize(0) != a.getDimSize(0)))
    return emitOpError("batch dimensions differ");
  // A batched dot's M and N may be smaller: its mma.sync tiles hold them
  // repeated (kiln-assign-layouts, DotToLLVM). So may a 2-D dot's M down to
  // 8, the rows of half an mma.sync tile.
  if (k < 16 || (rank == 2 && (m < 8 || n < 16)))
    return emitOpError(rank == 2
                           ? "M must be at least 8, N and K at least 16, got M="
                           : "K must be at least 16, got M=")
           << m << ", N=" << n << ", K=" << k;
  Type ea = a.getElementType(), eb = b.getElementType();
  bool bothFp8 = kiln::isFp8(ea) && kiln::isFp8(eb);
  if (ea != eb && !bothFp8)
    return emitOpError("operand element types differ: ") << ea << " and " << eb;
  return success();
}
