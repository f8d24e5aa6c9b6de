//===- MatrixRows.cpp - accesses as stmatrix and ldmatrix perform them ---===//

#include "compiler/layout/MatrixRows.h"

namespace kiln::layout {

std::optional<LinearLayout> matrixRowsAccess(const LinearLayout &access,
                                             bool transposed) {
  if (access.getInDimSizeLog2(kRegister) < 3 ||
      access.getInDimSizeLog2(kLane) != 5)
    return std::nullopt;
  using Vector = LinearLayout::Vector;
  auto basis = [&](llvm::StringRef dim, int32_t bit) {
    return Vector(access.getBasis(dim, bit));
  };
  llvm::SmallVector<Vector, 3> inRow = {basis(kRegister, 0), basis(kLane, 0),
                                        basis(kLane, 1)};
  llvm::SmallVector<Vector, 3> acrossRows = {basis(kLane, 2), basis(kLane, 3),
                                             basis(kLane, 4)};
  if (transposed)
    std::swap(inRow, acrossRows);
  llvm::SmallVector<LinearLayout::InDim, 4> ins;
  for (const LinearLayout::InDim &in : access.getInDims()) {
    LinearLayout::InDim moved{in.name, {}};
    if (in.name == kRegister) {
      moved.bases.assign(inRow.begin(), inRow.end());
      for (int32_t bit = 3; bit < int32_t(in.bases.size()); ++bit)
        moved.bases.push_back(in.bases[bit]);
    } else if (in.name == kLane) {
      moved.bases.assign(acrossRows.begin(), acrossRows.end());
      moved.bases.push_back(basis(kRegister, 1));
      moved.bases.push_back(basis(kRegister, 2));
    } else {
      moved.bases = in.bases;
    }
    ins.push_back(std::move(moved));
  }
  return LinearLayout(ins, access.getOutDims());
}

} // namespace kiln::layout
