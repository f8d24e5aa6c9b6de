//===- DistributedEncodings.cpp - what each distributed encoding means ----===//
//
// The DistributedEncodingAttr interface of blocked, slice and mma: rank,
// tile extent and linear layout (compiler/layout/BlockedLayouts.h). Every
// pass and lowering that needs to know which thread holds which element
// asks these, so that an encoding's meaning is written once.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/layout/BlockedLayouts.h"

using namespace mlir;
using kiln::layout::LinearLayout;

namespace {

bool isPowerOfTwoShape(ArrayRef<int64_t> shape) {
  return !shape.empty() && llvm::all_of(shape, [](int64_t n) {
    return n > 0 && llvm::isPowerOf2_64(uint64_t(n));
  });
}

} // namespace

// --- blocked --------------------------------------------------------------

unsigned kiln::gpu::BlockedEncodingAttr::getRank() const {
  return unsigned(getOrder().size());
}

int64_t kiln::gpu::BlockedEncodingAttr::getTileExtent(unsigned dim) const {
  return int64_t(getSizePerThread()[dim]) * getThreadsPerWarp()[dim] *
         getWarpsPerCTA()[dim];
}

std::optional<LinearLayout>
kiln::gpu::BlockedEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  if (!isPowerOfTwoShape(shape) || shape.size() != getRank())
    return std::nullopt;
  return kiln::layout::blocked(shape, getSizePerThread(), getThreadsPerWarp(),
                               getWarpsPerCTA(), getOrder());
}

// --- slice ----------------------------------------------------------------

unsigned kiln::gpu::SliceEncodingAttr::getRank() const {
  auto parent = dyn_cast<DistributedEncodingAttr>(getParent());
  unsigned parentRank = parent ? parent.getRank() : 0;
  return parentRank > 1 ? parentRank - 1 : 0;
}

int64_t kiln::gpu::SliceEncodingAttr::getTileExtent(unsigned dim) const {
  return cast<DistributedEncodingAttr>(getParent())
      .getTileExtent(dim < getDim() ? dim : dim + 1);
}

std::optional<LinearLayout>
kiln::gpu::SliceEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  auto parent = dyn_cast<DistributedEncodingAttr>(getParent());
  unsigned dim = getDim();
  if (!parent || !isPowerOfTwoShape(shape) || dim > shape.size())
    return std::nullopt;
  // The parent over the shape with the sliced dimension one tile long:
  // slicing then removes exactly the registers that moved along it.
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + dim, parent.getTileExtent(dim));
  std::optional<LinearLayout> whole = parent.toLinearLayout(parentShape);
  if (!whole)
    return std::nullopt;
  return kiln::layout::slice(*whole, dim);
}

// --- mma ------------------------------------------------------------------

unsigned kiln::gpu::MmaEncodingAttr::getRank() const {
  return unsigned(getWarpsPerCTA().size());
}

int64_t kiln::gpu::MmaEncodingAttr::getTileExtent(unsigned dim) const {
  // One m16n8 tile per warp (one batch per warp of a 3-D layout); with
  // warpgroups along N, instrN columns a warpgroup.
  unsigned rank = getRank();
  int64_t columns = getInstrN() ? getInstrN() : 8;
  int64_t perWarp = dim + 2 == rank ? 16 : dim + 1 == rank ? columns : 1;
  return perWarp * getWarpsPerCTA()[dim];
}

std::optional<LinearLayout>
kiln::gpu::MmaEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  if (!isPowerOfTwoShape(shape) || shape.size() != getRank())
    return std::nullopt;
  if (getInstrN())
    return kiln::layout::wgmmaSplitN(shape, getWarpsPerCTA(), getInstrN());
  return kiln::layout::mmaV2(shape, getWarpsPerCTA());
}
