//===- ExtractPieces.h - where kiln.extract renames registers --*- C++ -*-===//
//
// kiln.extract takes a piece of a tensor at offsets that are multiples of
// the piece's sizes. In a layout whose lanes and warps do not span past the
// piece along a sliced dimension, the thread that holds a piece's element at
// offset 0 holds it at every offset: the piece keeps the layout and the
// lowering renames registers (compiler/conversion/LayoutToLLVM.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_EXTRACTPIECES_H
#define KILN_IR_EXTRACTPIECES_H

#include "compiler/ir/Dialects.h"

namespace kiln {

/// Whether pieces of shape `piece` taken from a tensor of shape `whole` in
/// `encoding` keep that layout: along each sliced dimension, a blocked
/// layout's threads and warps span at most the piece; an mma layout is
/// sliced along N only, in multiples of its 8 columns, with warps that
/// split M alone (the wgmma accumulator's).
inline bool keepsPieces(mlir::Attribute encoding, llvm::ArrayRef<int64_t> whole,
                        llvm::ArrayRef<int64_t> piece) {
  auto sliced = [&](size_t d) { return piece[d] != whole[d]; };
  if (auto blocked = llvm::dyn_cast<gpu::BlockedEncodingAttr>(encoding)) {
    for (size_t d = 0; d < piece.size(); ++d)
      if (sliced(d) && int64_t(blocked.getSizePerThread()[d]) *
                               blocked.getThreadsPerWarp()[d] *
                               blocked.getWarpsPerCTA()[d] >
                           piece[d])
        return false;
    return true;
  }
  if (auto mma = llvm::dyn_cast<gpu::MmaEncodingAttr>(encoding))
    return piece.size() == 2 && !sliced(0) && piece[1] % 8 == 0 &&
           mma.getWarpsPerCTA()[1] == 1;
  return false;
}

} // namespace kiln

#endif // KILN_IR_EXTRACTPIECES_H
