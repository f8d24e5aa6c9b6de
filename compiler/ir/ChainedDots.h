//===- ChainedDots.h - attention's dots when p @ v splits N --------------===//
//
// Attention over 64-row tiles at 8 warps on wgmma (DeepSeek-V3's MLA
// prefill, SGLang's extend attention at head dims up to 256): wgmma's two
// warpgroups cannot both go along M, so p @ v splits N between them, each
// reading all of p's rows from its registers. The dots that compute p (q @
// kᵀ, and the dots accumulating into it) then put all warps along M: the
// warpgroups beyond the tile compute copies of its rows, and p sits where
// every warpgroup's fragments are (layout::holdsAFragments). Upstream does
// the same. kiln-assign-layouts lays the dots out so; kilnc keeps the
// config's warps for such a kernel rather than fewer (warpsForWgmma).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_CHAINEDDOTS_H
#define KILN_IR_CHAINEDDOTS_H

#include "compiler/ir/TargetInfo.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace kiln {

struct ChainedDotSplit {
  /// The 2-D dots whose results feed some dot's a (through elementwise ops,
  /// broadcasts and transposes), and those accumulating into them.
  llvm::SetVector<mlir::Operation *> feeding;
  /// Every dot's M.
  int64_t rows = 0;
  /// The columns each warpgroup takes of the other dots' N.
  int64_t columns = 0;
};

/// Adds to `dots` the dots `a` is computed from through elementwise ops,
/// broadcasts and transposes, within 16 steps back (q @ kᵀ for p @ v's a).
void collectFeedingDots(mlir::Value a,
                        llvm::SetVector<mlir::Operation *> &dots);

/// The split of the 2-D dots under `root` at `numWarps` warps on `target`,
/// when some dot's a is computed from another's result and every dot fits:
/// 16-bit operands, M a multiple of 64 below the warps' 16 rows each (and
/// dividing them), the feeding dots at most 256 columns, the others one
/// shape whose N splits between the warpgroups in whole 128-byte panels
/// (TensorCoreFlavour::columnsSplittingN). None otherwise.
std::optional<ChainedDotSplit> splitChainedDots(mlir::Operation *root,
                                                const TargetInfo &target,
                                                unsigned numWarps);

} // namespace kiln

#endif // KILN_IR_CHAINEDDOTS_H
