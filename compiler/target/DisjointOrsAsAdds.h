//===- DisjointOrsAsAdds.h - x | c with disjoint bits back to x + c -------===//
//
// InstCombine writes an add of operands without common bits as
// `or disjoint`. LLVM 22's straight-line strength reduction in the NVPTX
// backend takes (x + c) * s as x * s + c * s only when it sees an add, so
// every element of a thread's run of consecutive offsets (x | 1, x | 2, ...)
// kept its own multiply: tutorial 04's Philox counters took eight mul.lo per
// round where Triton's LLVM takes one and seven adds, and 40 registers
// where Triton takes 32. Written back as adds after the optimization
// pipeline (where InstCombine would undo it), they are candidates again.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_DISJOINTORSASADDS_H
#define KILN_TARGET_DISJOINTORSASADDS_H

namespace llvm {
class Function;
} // namespace llvm

namespace kiln {

/// Rewrites each integer `or disjoint x, C` (C a constant) of `function` as
/// `add nuw nsw x, C`: without common bits no carry happens, so neither
/// wraps. Returns whether `function` changed.
bool disjointOrsAsAdds(llvm::Function &function);

} // namespace kiln

#endif // KILN_TARGET_DISJOINTORSASADDS_H
