//===- RematerializeInLoops.h - recompute hoisted per-thread values -*- C++
//-*-//
//
// LLVM's LICM hoists every loop-invariant computation out of a loop nest to
// the kernel's entry. For per-thread offsets and masks that a loop uses once
// per iteration of an outer loop, between its inner loops (a persistent
// kernel's epilogue after its K loop, or the masked fallback behind a
// descriptor store's run-time check), that costs a register each for the
// whole kernel, or a spill: tutorial 08's grouped GEMM on TMA computed about
// 150 shared-memory offsets and row indices of its fallback in the entry
// block, spilled them there, and did so in every program, also in those that
// got no tile. This transformation recomputes such trees next to their uses
// instead, where the inner loop's registers are free again.
//
// Like the rematerialization after loops, it only makes the candidate that
// emitPTX offers beside the plain PTX; the driver keeps whichever ptxas
// assembles with fewer spills, then fewer registers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_REMATERIALIZEINLOOPS_H
#define KILN_TARGET_REMATERIALIZEINLOOPS_H

namespace llvm {
class Function;
class LoopInfo;
} // namespace llvm

namespace kiln {

/// For every value defined outside all loops of `function` whose uses all
/// lie in loops that hold other loops, outside those inner loops (or are
/// other such values), and whose computation is a small tree of pure
/// operations over special-register reads, constants, arguments and values
/// alive anyway, clones the tree before its uses, once per block; the
/// special registers are read through side-effecting inline asm so that the
/// backend's CSE keeps the copies apart. Trees without a special register
/// are uniform and left alone. Returns whether `function` changed.
bool rematerializeInLoops(llvm::Function &function, llvm::LoopInfo &loops);

} // namespace kiln

#endif // KILN_TARGET_REMATERIALIZEINLOOPS_H
