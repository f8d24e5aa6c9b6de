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

/// Whether wgmma computes `acc` (2-D, in an mma layout) with operands of
/// `flavour` on `target` at `numWarps` warps: TensorCoreFlavour::fitsWgmma
/// asked of the accumulator's layout (its warps along M, and each
/// warpgroup's instrN columns or all of them). kiln-stage-dots and
/// kiln-pipeline-dots ask it before they make a shared_dot; takesWgmma
/// below, the lowering's choice, asks it of one.
inline bool accumulatorFitsWgmma(const TensorCoreFlavour &flavour,
                                 const TargetInfo &target,
                                 mlir::RankedTensorType acc, unsigned numWarps,
                                 bool aKContiguous, bool bKContiguous,
                                 bool aInRegisters) {
  auto mma = mlir::dyn_cast<gpu::MmaEncodingAttr>(acc.getEncoding());
  if (!mma || acc.getRank() != 2)
    return false;
  int64_t n = acc.getDimSize(1);
  // Each warpgroup's instruction: all n columns, or its instrN of them.
  int64_t columns = mma.getInstrN() ? int64_t(mma.getInstrN()) : n;
  return flavour.fitsWgmma(target, acc.getDimSize(0), n, numWarps,
                           mma.getWarpsPerCTA()[0], columns, aKContiguous,
                           bKContiguous, aInRegisters);
}

/// Whether `dot` lowers to wgmma (false also where it does not lower at
/// all: its lowering reports why).
inline bool takesWgmma(gpu::SharedDotOp dot) {
  auto module = dot->getParentOfType<mlir::ModuleOp>();
  if (!module)
    return false;
  TargetInfo target = TargetInfo::of(module);
  mlir::RankedTensorType c = dot.getC().getType();
  auto warps = module->getAttrOfType<mlir::IntegerAttr>(
      gpu::KilnGPUDialect::kNumWarpsAttrName);
  if (!warps)
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
  return accumulatorFitsWgmma(*flavour, target, c, unsigned(warps.getInt()),
                              aKContiguous, bKContiguous,
                              /*aInRegisters=*/!aTile);
}

} // namespace kiln

#endif // KILN_IR_SHAREDDOTFORM_H
