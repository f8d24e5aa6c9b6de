//===- Stmatrix.cpp - storing 16-bit fragments with stmatrix --------------===//

#include "compiler/conversion/Stmatrix.h"

#include "compiler/conversion/LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace kiln {

std::optional<layout::LinearLayout>
stmatrixWriter(const layout::LinearLayout &access, bool transposed) {
  if (access.getInDimSizeLog2(layout::kRegister) < 3 ||
      access.getInDimSizeLog2(layout::kLane) != 5)
    return std::nullopt;
  using Vector = layout::LinearLayout::Vector;
  auto basis = [&](llvm::StringRef dim, int32_t bit) {
    return Vector(access.getBasis(dim, bit));
  };
  llvm::SmallVector<Vector, 3> inRow = {basis(layout::kRegister, 0),
                                        basis(layout::kLane, 0),
                                        basis(layout::kLane, 1)};
  llvm::SmallVector<Vector, 3> acrossRows = {basis(layout::kLane, 2),
                                             basis(layout::kLane, 3),
                                             basis(layout::kLane, 4)};
  if (transposed)
    std::swap(inRow, acrossRows);
  llvm::SmallVector<layout::LinearLayout::InDim, 4> ins;
  for (const layout::LinearLayout::InDim &in : access.getInDims()) {
    layout::LinearLayout::InDim moved{in.name, {}};
    if (in.name == layout::kRegister) {
      moved.bases.assign(inRow.begin(), inRow.end());
      for (int32_t bit = 3; bit < int32_t(in.bases.size()); ++bit)
        moved.bases.push_back(in.bases[bit]);
    } else if (in.name == layout::kLane) {
      moved.bases.assign(acrossRows.begin(), acrossRows.end());
      moved.bases.push_back(basis(layout::kRegister, 1));
      moved.bases.push_back(basis(layout::kRegister, 2));
    } else {
      moved.bases = in.bases;
    }
    ins.push_back(std::move(moved));
  }
  return layout::LinearLayout(ins, access.getOutDims());
}

void emitStmatrix(OpBuilder &b, Location loc, Value sharedAddress,
                  ValueRange elements, bool transposed) {
  // Matrix m's register: the pair 2m, 2m+1, packed.
  Type pair = VectorType::get({2}, elements.front().getType());
  SmallVector<Value, 5> operands{sharedAddress};
  for (int32_t m = 0; m < 4; ++m) {
    Value v = LLVM::UndefOp::create(b, loc, pair);
    for (int32_t i = 0; i < 2; ++i)
      v = LLVM::InsertElementOp::create(b, loc, v, elements[2 * m + i],
                                        i32Constant(b, loc, i));
    operands.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), v));
  }
  inlinePtxEffect(b, loc, Type(),
                  transposed
                      ? "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0], "
                        "{$1, $2, $3, $4};"
                      : "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], "
                        "{$1, $2, $3, $4};",
                  "r,r,r,r,r", operands);
}

} // namespace kiln
