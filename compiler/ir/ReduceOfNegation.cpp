//===- ReduceOfNegation.cpp - max/min of negated integers, rewritten ------===//
//
// ptxas (seen with CUDA 13.0's, and reported for 12.8 to 13.3) fuses a
// chain of integer max (or min) over negated values into three-input
// VIMNMX3 instructions and drops the negation of the middle operand, so
// `tl.max(-x)` computes max(-x0, x1, -x2, x3, ...) (found by differential
// fuzzing, case f116; docs/reliability.md). The rewrite removes the
// negations from the chain, exactly for every input: -x = ~(x - 1) and
// ~ reverses the signed order, so
//
//   max_i(-x_i) = ~min_i(x_i - 1),   min_i(-x_i) = ~max_i(x_i - 1).
//
// (-max(x) would be wrong where some x_i is INT_MIN.)
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

/// A constant of `type` (a scalar integer, or a tensor splat with its
/// encoding) with every element `value`.
Value integerConstant(PatternRewriter &rewriter, Location loc, Type type,
                      int64_t value) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    auto element = cast<IntegerType>(tensor.getElementType());
    return arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(tensor,
                               APInt(element.getWidth(), uint64_t(value),
                                     /*isSigned=*/true)));
  }
  return arith::ConstantOp::create(rewriter, loc,
                                   rewriter.getIntegerAttr(type, value));
}

struct ReduceOfNegation : OpRewritePattern<kiln::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(kiln::ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSrcs().size() != 1)
      return failure();
    // The combine region: one signed max or min of its two arguments.
    Block &body = op.getCombineOp().front();
    if (!llvm::hasSingleElement(body.without_terminator()))
      return failure();
    Operation &combine = body.front();
    if (!isa<arith::MaxSIOp, arith::MinSIOp>(combine) ||
        body.getTerminator()->getOperand(0) != combine.getResult(0))
      return failure();
    Value a = body.getArgument(0), b = body.getArgument(1);
    if (!((combine.getOperand(0) == a && combine.getOperand(1) == b) ||
          (combine.getOperand(0) == b && combine.getOperand(1) == a)))
      return failure();
    // Over negations: 0 - x.
    auto negation = op.getSrcs()[0].getDefiningOp<arith::SubIOp>();
    if (!negation || !matchPattern(negation.getLhs(), m_Zero()))
      return failure();

    Location loc = op.getLoc();
    Value x = negation.getRhs();
    Value shifted = arith::SubIOp::create(
        rewriter, loc, x, integerConstant(rewriter, loc, x.getType(), 1));
    auto dual = cast<kiln::ReduceOp>(rewriter.clone(*op));
    dual->setOperand(0, shifted);
    Operation &dualCombine = dual.getCombineOp().front().front();
    rewriter.setInsertionPoint(&dualCombine);
    Value lhs = dualCombine.getOperand(0), rhs = dualCombine.getOperand(1);
    Value flipped =
        isa<arith::MaxSIOp>(dualCombine)
            ? Value(arith::MinSIOp::create(rewriter, loc, lhs, rhs))
            : Value(arith::MaxSIOp::create(rewriter, loc, lhs, rhs));
    rewriter.replaceOp(&dualCombine, flipped);
    rewriter.setInsertionPointAfter(dual);
    Value result = dual.getResult(0);
    rewriter.replaceOp(
        op, arith::XOrIOp::create(
                rewriter, loc, result,
                integerConstant(rewriter, loc, result.getType(), -1)));
    return success();
  }
};

} // namespace

void kiln::ReduceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                 MLIRContext *context) {
  patterns.add<ReduceOfNegation>(context);
}
