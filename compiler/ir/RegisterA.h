//===- RegisterA.h - a dot's a read from the registers it is computed in -===//
//
// Tensor-core instructions may take a (M x K) from registers: each thread
// then passes the fragments of its accumulator rows. A tensor computed in
// an mma layout (attention's p, from the scores' accumulator) already holds
// them when its lanes and warps sit where the accumulator's do, apart from
// the columns each warp takes of the accumulator (layout::holdsAFragments).
// kiln-stage-dots and kiln-pipeline-dots ask this before reading a from
// registers; the wgmma lowering checks the same.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_REGISTERA_H
#define KILN_IR_REGISTERA_H

#include "compiler/ir/Dialects.h"
#include "compiler/ir/TensorCoreFlavour.h"
#include "compiler/layout/BlockedLayouts.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// layout::holdsAFragments for tensors of these types (false where either
/// has no linear layout, and for a of 8 rows, whose mma tiles hold its rows
/// twice: such a dot reads a from shared memory).
inline bool holdsAFragments(mlir::RankedTensorType a,
                            mlir::RankedTensorType acc) {
  if (acc.getRank() == 2 && acc.getDimSize(0) < 16)
    return false;
  auto aEncoding =
      mlir::dyn_cast_or_null<gpu::DistributedEncodingAttr>(a.getEncoding());
  auto accEncoding =
      mlir::dyn_cast_or_null<gpu::DistributedEncodingAttr>(acc.getEncoding());
  if (!aEncoding || !accEncoding)
    return false;
  std::optional<layout::LinearLayout> aLayout =
      aEncoding.toLinearLayout(a.getShape());
  std::optional<layout::LinearLayout> accLayout =
      accEncoding.toLinearLayout(acc.getShape());
  return aLayout && accLayout && layout::holdsAFragments(*aLayout, *accLayout);
}

/// Whether a dot of `flavour` reads `a` from the registers that hold it
/// where its accumulator has type `acc`: 16-bit a holding every warp's
/// fragments (holdsAFragments); 8-bit a in the accumulator's own layout,
/// all warps along M (its fragments take a shuffle within each quad).
inline bool readsAFromRegisters(mlir::RankedTensorType a,
                                mlir::RankedTensorType acc,
                                const TensorCoreFlavour &flavour) {
  auto mma = mlir::dyn_cast<gpu::MmaEncodingAttr>(a.getEncoding());
  if (!flavour.registerA() || !mma || a.getRank() != 2 || acc.getRank() != 2)
    return false;
  if (flavour.elementBytes != 2)
    return mma == acc.getEncoding() && mma.getWarpsPerCTA()[1] == 1 &&
           acc.getDimSize(0) >= 16;
  return holdsAFragments(a, acc);
}

} // namespace kiln

#endif // KILN_IR_REGISTERA_H
