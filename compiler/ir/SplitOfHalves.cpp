//===- SplitOfHalves.cpp - split(permute(reshape)) as two extracts --------===//
//
// Kernels that store an accumulator in two halves along its last dimension
// (upstream's tutorial 09 with EPILOGUE_SUBTILE) write
//
//   acc = tl.reshape(acc, (M, 2, N // 2))
//   acc0, acc1 = tl.split(tl.permute(acc, (0, 2, 1)))
//
// whose results are acc[:, :N//2] and acc[:, N//2:]. As written, the
// reshape and the permute move every element through shared memory (their
// results get layouts of their own). Rewritten as two kiln.extract of the
// operand, layout assignment keeps each half in the accumulator's layout
// where that layout allows (docs/layouts.md), and the halves are registers
// of it.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

struct SplitOfHalves : OpRewritePattern<kiln::SplitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(kiln::SplitOp split,
                                PatternRewriter &rewriter) const override {
    auto trans = split.getSrc().getDefiningOp<kiln::TransOp>();
    if (!trans || !trans->hasOneUse())
      return failure();
    auto reshape = trans.getSrc().getDefiningOp<kiln::ReshapeOp>();
    if (!reshape || !reshape->hasOneUse())
      return failure();
    RankedTensorType x = reshape.getSrc().getType();
    RankedTensorType halves = reshape.getType();
    int64_t rank = x.getRank();
    // [..., 2n] -> [..., 2, n], then the last two swapped: [..., n, 2].
    if (halves.getRank() != rank + 1 ||
        halves.getShape().take_front(rank - 1) !=
            x.getShape().take_front(rank - 1) ||
        halves.getDimSize(rank - 1) != 2 ||
        2 * halves.getDimSize(rank) != x.getDimSize(rank - 1))
      return failure();
    ArrayRef<int32_t> order = trans.getOrder();
    for (int64_t d = 0; d + 2 <= rank; ++d)
      if (order[d] != d)
        return failure();
    if (order[rank - 1] != rank || order[rank] != rank - 1)
      return failure();
    auto half = dyn_cast<RankedTensorType>(split.getLhs().getType());
    if (!half)
      return failure();
    int64_t n = halves.getDimSize(rank);
    SmallVector<int64_t> offsets(rank, 0);
    Location loc = split.getLoc();
    Value lhs =
        kiln::ExtractOp::create(rewriter, loc, half, reshape.getSrc(), offsets);
    offsets.back() = n;
    Value rhs =
        kiln::ExtractOp::create(rewriter, loc, half, reshape.getSrc(), offsets);
    rewriter.replaceOp(split, {lhs, rhs});
    return success();
  }
};

} // namespace

void kiln::SplitOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                MLIRContext *context) {
  patterns.add<SplitOfHalves>(context);
}
