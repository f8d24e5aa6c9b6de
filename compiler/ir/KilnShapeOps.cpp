//===- KilnShapeOps.cpp - verifiers of the shape operations ---------------===//
//
// The front end checks shapes before it builds these ops, so a failure here
// is a compiler bug; the messages still say which shapes disagree.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace {
int64_t numElements(RankedTensorType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape())
    n *= d;
  return n;
}
} // namespace

LogicalResult kiln::BroadcastOp::verify() {
  auto src = getSrc().getType();
  auto result = getResult().getType();
  if (src.getRank() != result.getRank())
    return emitOpError("operand rank ")
           << src.getRank() << " differs from result rank " << result.getRank();
  for (auto [i, from, to] : llvm::enumerate(src.getShape(), result.getShape()))
    if (from != to && from != 1)
      return emitOpError("dimension ")
             << i << " of size " << from << " cannot broadcast to " << to;
  return success();
}

LogicalResult kiln::ExpandDimsOp::verify() {
  auto src = getSrc().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError("axis ")
           << axis << " out of range for rank " << src.getRank();
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (getResult().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the operand's with a 1 at axis ")
           << axis;
  return success();
}

LogicalResult kiln::ReshapeOp::verify() {
  if (numElements(getSrc().getType()) != numElements(getResult().getType()))
    return emitOpError("operand and result have different element counts");
  return success();
}

bool kiln::ReshapeOp::flattensForReduction() {
  return getAllowReorder() && getType().getRank() == 1 &&
         llvm::all_of(getResult().getUsers(), [](Operation *user) {
           return isa<kiln::ReduceOp>(user);
         });
}

LogicalResult kiln::TransOp::verify() {
  auto src = getSrc().getType();
  ArrayRef<int32_t> order = getOrder();
  if (int64_t(order.size()) != src.getRank())
    return emitOpError("order has ") << order.size() << " entries for a rank-"
                                     << src.getRank() << " operand";
  SmallVector<bool> seen(order.size(), false);
  SmallVector<int64_t> expected;
  for (int32_t d : order) {
    if (d < 0 || d >= src.getRank() || seen[d])
      return emitOpError("order must be a permutation of 0..")
             << src.getRank() - 1;
    seen[d] = true;
    expected.push_back(src.getDimSize(d));
  }
  if (getResult().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the operand's permuted by order");
  return success();
}

// tl.trans(x.T) is common where one loaded tile feeds a dot as B and, through
// .T, another: folding it leaves both reading the load, so the staging that
// puts the load in shared memory serves both dots without a register copy.
OpFoldResult kiln::TransOp::fold(FoldAdaptor) {
  Value src = getSrc();
  SmallVector<int32_t> order(getOrder());
  if (auto inner = src.getDefiningOp<kiln::TransOp>()) {
    // Result dimension i is src dimension order[i], which is inner's
    // operand dimension innerOrder[order[i]].
    ArrayRef<int32_t> innerOrder = inner.getOrder();
    for (int32_t &d : order)
      d = innerOrder[d];
    src = inner.getSrc();
  }
  for (auto [i, d] : llvm::enumerate(order))
    if (int64_t(i) != d)
      return {};
  if (src.getType() != getType())
    return {};
  return src;
}

LogicalResult kiln::JoinOp::verify() {
  SmallVector<int64_t> expected(getLhs().getType().getShape());
  expected.push_back(2);
  if (getResult().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the operands' with a minor "
                       "dimension of 2");
  if (getResult().getType().getElementType() !=
      getLhs().getType().getElementType())
    return emitOpError("result element type must be the operands'");
  return success();
}

LogicalResult kiln::SplitOp::verify() {
  auto src = getSrc().getType();
  if (src.getShape().back() != 2)
    return emitOpError("the minor dimension must have size 2");
  Type expected = src.getElementType();
  if (src.getRank() > 1)
    expected = RankedTensorType::get(src.getShape().drop_back(), expected);
  Type actual = getLhs().getType();
  if (auto t = dyn_cast<RankedTensorType>(actual))
    actual = RankedTensorType::get(t.getShape(), t.getElementType());
  if (actual != expected)
    return emitOpError("results must have type ") << expected;
  return success();
}

LogicalResult kiln::ExtractOp::verify() {
  auto src = getSrc().getType();
  auto result = getResult().getType();
  ArrayRef<int64_t> offsets = getOffsets();
  if (result.getRank() != src.getRank() ||
      int64_t(offsets.size()) != src.getRank())
    return emitOpError("operand, result and offsets must have one rank");
  for (int64_t d = 0; d < src.getRank(); ++d) {
    int64_t size = result.getDimSize(d);
    if (size <= 0 || offsets[d] < 0 || offsets[d] % size != 0 ||
        offsets[d] + size > src.getDimSize(d))
      return emitOpError("offset ")
             << offsets[d] << " of dimension " << d
             << " must be a multiple of the result's size there (" << size
             << ") and leave the piece inside the operand ("
             << src.getDimSize(d) << ")";
  }
  return success();
}

LogicalResult kiln::GatherOp::verify() {
  auto src = getSrc().getType();
  auto index = getIndex().getType();
  auto result = getResult().getType();
  int64_t rank = src.getRank();
  int32_t axis = getAxis();
  if (index.getRank() != rank || axis < 0 || axis >= rank)
    return emitOpError("index must have src's rank and axis be one of its "
                       "dimensions");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && index.getDimSize(d) != src.getDimSize(d))
      return emitOpError("index must match src on every dimension but axis");
  if (result.getShape() != index.getShape() ||
      result.getElementType() != src.getElementType())
    return emitOpError("result must have index's shape and src's element "
                       "type");
  return success();
}

LogicalResult kiln::HistogramOp::verify() {
  auto input = getInput().getType();
  if (input.getRank() != 1 || getResult().getType().getRank() != 1)
    return emitOpError("input and result must be 1-D");
  if (getMask() && getMask().getType().getShape() != input.getShape())
    return emitOpError("mask must have input's shape");
  return success();
}

LogicalResult kiln::CatOp::verify() {
  auto lhs = getLhs().getType();
  auto result = getResult().getType();
  if (result.getRank() != lhs.getRank() ||
      result.getElementType() != lhs.getElementType())
    return emitOpError("result must have the operands' rank and element type");
  if (result.getDimSize(0) != 2 * lhs.getDimSize(0) ||
      result.getShape().drop_front() != lhs.getShape().drop_front())
    return emitOpError("result must join the operands along dimension 0");
  return success();
}
