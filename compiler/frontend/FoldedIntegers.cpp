//===- FoldedIntegers.cpp - run-time integers whose value is known --------===//
//
// A `:1` parameter is the constant 1 of its type (so that the variant types
// as the general one does), but Triton's JIT makes an argument equal to 1
// the constexpr 1: `tl.static_range(n)`, `tl.arange(0, 16 * n)` and
// `tl.static_assert(n == 1)` build upstream. Where a compile-time value is
// required, such a value is folded through the arith ops computed from it.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/Value.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

std::optional<llvm::APInt> foldedValue(Value v, unsigned depth) {
  llvm::APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return constant;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 16 || op->getNumResults() != 1 ||
      !isa<arith::ArithDialect>(op->getDialect()) ||
      !isa<IntegerType>(v.getType()))
    return std::nullopt;
  llvm::SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    if (!isa<IntegerType>(operand.getType()))
      return std::nullopt;
    std::optional<llvm::APInt> folded = foldedValue(operand, depth + 1);
    if (!folded)
      return std::nullopt;
    operands.push_back(IntegerAttr::get(operand.getType(), *folded));
  }
  llvm::SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != 1)
    return std::nullopt;
  // x * 1 folds to x: a value, not an attribute.
  if (auto same = dyn_cast_if_present<Value>(results.front()))
    return foldedValue(same, depth + 1);
  auto attr = dyn_cast_or_null<IntegerAttr>(
      dyn_cast_if_present<Attribute>(results.front()));
  if (!attr)
    return std::nullopt;
  return attr.getValue();
}

} // namespace

std::optional<kiln::frontend::FValue>
kiln::frontend::foldedInteger(const FValue &v) {
  if (!v.isRuntime() || v.type.isPointer || v.type.isBlock() ||
      !v.type.element.isInteger())
    return std::nullopt;
  std::optional<llvm::APInt> folded = foldedValue(v.value, 0);
  if (!folded)
    return std::nullopt;
  if (folded->getBitWidth() == 1)
    return FValue::boolean(folded->getBoolValue());
  return FValue::integer(v.type.element.isUnsigned()
                             ? int64_t(folded->getZExtValue())
                             : folded->getSExtValue());
}
