//===- WarpSpecialize.h - producer and consumer warps for a dot loop -----===//
//
// kiln-pipeline-dots hands a loop here when its enclosing loop is marked
// `tl.range(..., warp_specialize=True)` and both operands of its one
// accumulating wgmma come from TMA rings (WarpSpecialize.cpp says how the
// program is split).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_WARPSPECIALIZE_H
#define KILN_TRANSFORMS_WARPSPECIALIZE_H

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {

/// A dot operand read from a ring that TMA fills.
struct RingOperand {
  LoadOp load;
  gpu::MemDescType ring;
  /// The dot reads the transpose of the tile (a memdesc_trans view).
  bool viewTransposed = false;
};

/// The loop to specialize: `loop` (directly in `outer`'s body) accumulates
/// `dot` of operands a and b, each loaded in its body.
struct WarpSpecializedLoop {
  mlir::scf::ForOp outer, loop;
  DotOp dot;
  RingOperand operands[2];
  unsigned stages;
  unsigned numWarps;
};

/// The attribute `tl.range(..., warp_specialize=...)` leaves on a loop.
constexpr llvm::StringLiteral kWarpSpecializeAttr = "kiln.warp_specialize";

/// Splits the program into a producer warpgroup that runs `outer` with only
/// the TMA copies and the consumer warps that run the rest of the program
/// with waits instead of loads. Leaves the IR alone and returns false when
/// the program around the loops is not of a form it handles.
bool warpSpecialize(WarpSpecializedLoop spec);

} // namespace kiln

#endif // KILN_TRANSFORMS_WARPSPECIALIZE_H
