//===- AccumulateIntoDot.cpp - x + dot(a, b, 0) becomes dot(a, b, x) -----===//
//
// `acc += tl.dot(a, b)` reaches the IR as a dot with a zero accumulator and
// an add. Kept apart, the tensor cores fill a fresh zero tile and the add
// needs both tiles live at once: attention backward's dk and dv (128 x 128
// fp32 each at HEAD_DIM 128) would each need a second tile of registers.
// Accumulating into x in the dot sums the same products into the same
// start, in the tensor cores' order; upstream Triton folds the same form.
// Not for fp8 operands that may accumulate imprecisely (their default on
// sm_90): there x would lose the precision the separate fp32 add keeps.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

/// A dot whose accumulator is zero and whose result only `add` reads.
kiln::DotOp zeroAccumulatorDot(Value v, Operation *add) {
  auto dot = v.getDefiningOp<kiln::DotOp>();
  if (!dot || !dot->hasOneUse() || *dot->user_begin() != add ||
      dot->getBlock() != add->getBlock())
    return {};
  if (!matchPattern(dot.getC(), m_AnyZeroFloat()) &&
      !matchPattern(dot.getC(), m_Zero()))
    return {};
  auto a = cast<RankedTensorType>(dot.getA().getType()).getElementType();
  bool fp8 = isa<FloatType>(a) && a.getIntOrFloatBitWidth() == 8;
  if (fp8 && dot.getMaxNumImpreciseAcc().value_or(1) != 0)
    return {};
  return dot;
}

template <typename AddOp> struct AccumulateIntoDot : OpRewritePattern<AddOp> {
  using OpRewritePattern<AddOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i) {
      kiln::DotOp dot = zeroAccumulatorDot(add->getOperand(i), add);
      Value acc = add->getOperand(1 - i);
      if (!dot || acc.getType() != dot.getType())
        continue;
      rewriter.modifyOpInPlace(dot, [&] { dot.getCMutable().assign(acc); });
      // The accumulator must be defined before the dot reads it; it is
      // before the add, in this block or around it.
      if (Operation *def = acc.getDefiningOp();
          def && def->getBlock() == dot->getBlock() &&
          dot->isBeforeInBlock(def))
        rewriter.moveOpBefore(dot, add);
      rewriter.replaceOp(add, dot.getD());
      return success();
    }
    return failure();
  }
};

} // namespace

void kiln::DotOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns
      .add<AccumulateIntoDot<arith::AddFOp>, AccumulateIntoDot<arith::AddIOp>>(
          context);
}
