//===- SharedDotForm.h - which instructions a shared_dot lowers to -------===//
//
// A kiln_gpu.shared_dot becomes wgmma.mma_async, which reads its tiles
// through the async proxy, or ldmatrix and mma.sync, which read them
// through the generic proxy like any load. The lowering asks this to pick
// one; passes that place proxy fences ask it to know which proxy reads.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_SHAREDDOTFORM_H
#define KILN_IR_SHAREDDOTFORM_H

#include "compiler/ir/Dialects.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// Whether `dot` lowers to wgmma (false also where it does not lower at
/// all: its lowering reports why).
inline bool takesWgmma(gpu::SharedDotOp dot) {
  auto module = dot->getParentOfType<mlir::ModuleOp>();
  if (!module)
    return false;
  TargetInfo target = TargetInfo::of(module);
  mlir::RankedTensorType c = dot.getC().getType();
  auto mma = mlir::dyn_cast<gpu::MmaEncodingAttr>(c.getEncoding());
  auto warps = module->getAttrOfType<mlir::IntegerAttr>(
      gpu::KilnGPUDialect::kNumWarpsAttrName);
  if (!mma || !warps || c.getRank() != 2)
    return false;
  auto aTile = mlir::dyn_cast<gpu::MemDescType>(dot.getA().getType());
  auto aRegisters =
      mlir::dyn_cast<mlir::RankedTensorType>(dot.getA().getType());
  auto bTile = mlir::cast<gpu::MemDescType>(dot.getB().getType());
  mlir::Type element =
      aTile ? aTile.getElementType() : aRegisters.getElementType();
  std::optional<TensorCoreFlavour> flavour = tensorCoreFlavour(
      element, bTile.getElementType(), c.getElementType(),
      dot.getInputPrecision().value_or(InputPrecision::TF32), target);
  if (!flavour || bTile.getShape()[0] % flavour->kGroup() != 0 ||
      (aRegisters && !flavour->registerA()))
    return false;
  // K-contiguous a is untransposed, K-contiguous b transposed.
  bool aKContiguous =
      !aTile || !mlir::cast<gpu::NVMMASharedEncodingAttr>(aTile.getEncoding())
                     .getTransposed();
  bool bKContiguous =
      mlir::cast<gpu::NVMMASharedEncodingAttr>(bTile.getEncoding())
          .getTransposed();
  int64_t n = c.getDimSize(1);
  // Each warpgroup's instruction: all n columns, or its instrN of them.
  int64_t columns = mma.getInstrN() ? int64_t(mma.getInstrN()) : n;
  return flavour->fitsWgmma(target, c.getDimSize(0), n,
                            unsigned(warps.getInt()), mma.getWarpsPerCTA()[0],
                            columns, aKContiguous, bKContiguous,
                            /*aInRegisters=*/!aTile);
}

} // namespace kiln

#endif // KILN_IR_SHAREDDOTFORM_H
