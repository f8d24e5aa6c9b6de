//===- WarpSpecialize.h - producer and consumer warps for dot loops -------===//
//
// kiln-pipeline-dots hands the loops of a function here when they, or the
// loop around them, are marked `tl.range(..., warp_specialize=True)` and
// every tile their wgmma dots read comes from a TMA ring or was loaded
// once before them (WarpSpecialize.cpp says how the program is split).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_WARPSPECIALIZE_H
#define KILN_TRANSFORMS_WARPSPECIALIZE_H

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {

/// A dot operand's tile: read from a ring that TMA fills (loaded in the
/// loop's body), or loaded once before the loops (attention's q).
struct RingOperand {
  LoadOp load;
  /// The ring's type; one slot for a tile loaded once.
  gpu::MemDescType ring;
  bool once = false;
};

/// A wgmma dot of a specialized loop.
struct SpecializedDot {
  DotOp dot;
  /// Each operand's index among the loop's operands; -1 for a from
  /// registers (attention's p).
  int source[2] = {-1, -1};
  /// The dot reads the transpose of the tile (a memdesc_trans view).
  bool viewTransposed[2] = {false, false};
  /// Accumulates into its carried value, left in flight until the next
  /// iteration's dot (the matmul loop's one dot).
  bool accumulates = false;
  /// Only carried, and completed by the wait of this earlier dot in the
  /// next iteration (attention's p @ v, by q @ k's); -1 when not.
  int waitedBy = -1;
  /// The carried value it accumulates into or is carried as.
  unsigned carried = 0;
};

/// A loop to specialize: `loop` (directly in `outer`'s body when the
/// marked loop is one over tiles) runs `dots` on `operands`.
struct WarpSpecializedLoop {
  mlir::scf::ForOp outer, loop;
  llvm::SmallVector<SpecializedDot, 2> dots;
  llvm::SmallVector<RingOperand, 3> operands;
  unsigned stages;
};

/// The attribute `tl.range(..., warp_specialize=...)` leaves on a loop.
constexpr llvm::StringLiteral kWarpSpecializeAttr = "kiln.warp_specialize";

/// Splits the program into a producer warpgroup that runs `loops`, in
/// program order, with only their TMA copies, and `numWarps` consumer warps
/// that run the program with waits on the rings instead of the loads.
/// Leaves the IR alone and returns false when the program around the loops
/// is not of a form it handles.
bool warpSpecialize(llvm::MutableArrayRef<WarpSpecializedLoop> loops,
                    unsigned numWarps);

} // namespace kiln

#endif // KILN_TRANSFORMS_WARPSPECIALIZE_H
