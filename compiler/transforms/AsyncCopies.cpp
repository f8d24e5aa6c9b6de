//===- AsyncCopies.cpp - which loads cp.async can stage -------------------===//
#include "compiler/transforms/AsyncCopies.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

bool kiln::isZero(Value v) {
  if (!v)
    return true;
  if (matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero()))
    return true;
  if (auto splat = v.getDefiningOp<kiln::SplatOp>())
    return isZero(splat.getSrc());
  // A zero tile reshaped or repeated: FBGEMM's masked loads take
  // `other=_0` with `_0 = tl.zeros((1, 1), dtype)`, broadcast to the tile.
  Operation *op = v.getDefiningOp();
  if (isa_and_nonnull<kiln::BroadcastOp, kiln::ExpandDimsOp, kiln::ReshapeOp,
                      gpu::ConvertLayoutOp>(op))
    return isZero(op->getOperand(0));
  return false;
}

bool kiln::isSwizzlableLine(int64_t lineBytes) {
  return lineBytes >= 32 && llvm::isPowerOf2_64(uint64_t(lineBytes));
}

std::optional<kiln::CpAsyncForm> kiln::cpAsyncForm(LoadOp load,
                                                   AxisInfoAnalysis &axisInfo) {
  if (load.getBoundaryCheck() || load.getIsVolatile() ||
      !isZero(load.getOther()) ||
      !isa<RankedTensorType>(load.getPtr().getType()))
    return std::nullopt;
  auto type = cast<RankedTensorType>(load.getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  // The tile is copied along its pointers' fastest dimension.
  auto blocked = dyn_cast<gpu::BlockedEncodingAttr>(
      cast<RankedTensorType>(load.getPtr().getType()).getEncoding());
  unsigned dim = blocked ? blocked.getOrder()[0] : 1;
  // Not along runs of equal pointers (a thread holding whole runs of a
  // packed weight's rows, AssignLayouts' runLayout), nor along a single
  // line (a row of scales in its weight's layout): along the other.
  if (type.getRank() == 2 && (axisInfo.get(load.getPtr()).constancy[dim] > 1 ||
                              type.getShape()[dim] == 1))
    dim = 1 - dim;
  unsigned vec =
      axisInfo.vectorWidthAlong(load.getPtr(), load.getMask(), bits, dim);
  if (vec * bits < 32)
    return std::nullopt; // cp.async moves 4, 8 or 16 bytes
  if (!isSwizzlableLine(type.getShape()[dim] * bits / 8))
    return std::nullopt;
  return CpAsyncForm{vec, dim};
}
