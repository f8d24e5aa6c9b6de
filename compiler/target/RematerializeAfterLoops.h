//===- RematerializeAfterLoops.h - recompute per-thread indices after loops
//===//
//
// A kernel that loads a tile before its main loop and stores one after it at
// the same place (attention's q and o, a norm's row) computes the same
// per-thread addresses and bounds masks twice, and LLVM's CSE keeps the
// first copy alive across the whole loop: tens of registers that ptxas does
// not rematerialize, enough to cost a block per SM. This transformation
// recomputes such values after the loop instead, from the kernel's arguments
// and special registers, which cost no register while the loop runs.
//
// It does not always pay: where the loop is light and the code after it is
// not, ptxas may need more registers for the copy. emitPTX therefore offers
// both versions and the driver keeps the one ptxas assembles with fewer
// (compiler/driver/Pipeline.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_REMATERIALIZEAFTERLOOPS_H
#define KILN_TARGET_REMATERIALIZEAFTERLOOPS_H

namespace llvm {
class DominatorTree;
class Function;
class LoopInfo;
} // namespace llvm

namespace kiln {

/// For every value defined before an outermost loop of `function` and used
/// after it but not inside it, whose computation is a small tree of pure
/// operations over constants, arguments, special-register reads and values
/// the loop keeps alive anyway, clones that tree next to its uses after the
/// loop; for a use inside a later loop (the second loop of a causal
/// attention), once, in that loop's preheader. The clone reads the special
/// registers (%tid, %ctaid, ...) through side-effecting inline asm, and the
/// values kept alive anyway through a side-effecting move, so that CSE in the
/// NVPTX backend cannot fold it back into the copy before the loop. Trees of
/// constants and arguments only are left alone: they are uniform and cheap
/// to keep. Returns whether `function` changed.
bool rematerializeAfterLoops(llvm::Function &function,
                             llvm::DominatorTree &dominators,
                             llvm::LoopInfo &loops);

} // namespace kiln

#endif // KILN_TARGET_REMATERIALIZEAFTERLOOPS_H
