//===- ChainedDots.cpp - attention's dots when p @ v splits N ------------===//
#include "compiler/ir/ChainedDots.h"
#include "compiler/ir/Elementwise.h"
#include "compiler/ir/TensorCoreFlavour.h"

using namespace mlir;

void kiln::collectFeedingDots(Value a, llvm::SetVector<Operation *> &dots) {
  SmallVector<std::pair<Value, unsigned>> work{{a, 0}};
  while (!work.empty()) {
    auto [v, depth] = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || depth > 16)
      continue;
    if (isa<DotOp>(def)) {
      dots.insert(def);
      continue;
    }
    // Through transposes too (`tl.trans(p)`, a backward's p^T @ do): its
    // dot then has its warps along M as a chained one.
    if (isElementwise(def) || isa<BroadcastOp, TransOp>(def))
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          work.push_back({operand, depth + 1});
  }
}

std::optional<kiln::ChainedDotSplit>
kiln::splitChainedDots(Operation *root, const TargetInfo &target,
                       unsigned numWarps) {
  if (!target.hasWgmma() || numWarps % 4 != 0)
    return std::nullopt;
  SmallVector<DotOp> dots;
  ChainedDotSplit split;
  root->walk([&](DotOp dot) {
    if (dot.getType().getRank() != 2)
      return;
    dots.push_back(dot);
    collectFeedingDots(dot.getA(), split.feeding);
  });
  if (split.feeding.empty())
    return std::nullopt;
  // A dot accumulating into a feeding one (q1 @ k1 beside q @ kᵀ) feeds.
  for (size_t i = 0; i < split.feeding.size(); ++i)
    if (Operation *into = cast<DotOp>(split.feeding[i]).getC().getDefiningOp())
      if (isa<DotOp>(into))
        split.feeding.insert(into);
  std::optional<SmallVector<int64_t>> shape;
  int64_t rows = 16 * int64_t(numWarps);
  for (DotOp dot : dots) {
    int64_t m = dot.getType().getDimSize(0), n = dot.getType().getDimSize(1);
    std::optional<TensorCoreFlavour> flavour = tensorCoreFlavour(
        dot.getA().getType().getElementType(),
        dot.getB().getType().getElementType(), dot.getType().getElementType(),
        dot.getInputPrecision(), target);
    if (!flavour || flavour->elementBytes != 2 || m % 64 != 0 || m >= rows ||
        rows % m != 0 || (split.rows && split.rows != m))
      return std::nullopt;
    split.rows = m;
    if (split.feeding.contains(dot)) {
      if (n % 8 != 0 || n > 256)
        return std::nullopt;
      continue;
    }
    int64_t columns = flavour->columnsSplittingN(m, n, numWarps);
    if (!columns ||
        (shape && ArrayRef<int64_t>(*shape) != dot.getType().getShape()))
      return std::nullopt;
    shape.emplace(dot.getType().getShape());
    split.columns = columns;
  }
  if (!split.columns)
    return std::nullopt;
  return split;
}
