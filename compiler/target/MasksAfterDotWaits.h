//===- MasksAfterDotWaits.h - additive masks applied after wgmma waits ----===//
//
// A causal mask written as `qk = qk * scale + tl.where(m >= n, 0, -inf)`
// is, after O3, `fadd (fmul qk, scale), select(c, 0, -inf)`, contracted by
// the back end into fma(qk, scale, select). The select does not depend on
// the dot, so ptxas computes every one of them while the wgmma group is in
// flight, to hide the wait, and holds a float per element through it:
// beside a 128 x 128 fp32 accumulator at 4 warps that left the softmax
// after it one predicate and no registers to interleave its exponentials
// with (kernl's causal attention on the H200: 0.88 of Triton, its
// non-causal form 1.10). Written as
// `select(c, fma(qk, scale, 0), fma(qk, scale, -inf))`, the value the
// contraction gives bit for bit, each select needs its element of the dot
// and the mask is computed where it is used (1.09), for one more fma an
// element.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_MASKSAFTERDOTWAITS_H
#define KILN_TARGET_MASKSAFTERDOTWAITS_H

namespace llvm {
class Function;
} // namespace llvm

namespace kiln {

/// Rewrites each `fadd (fmul a, b), select(c, C1, C2)` of `function` (C1,
/// C2 float constants, either operand order) whose product is computed from
/// the results of a `wgmma.wait_group` in its block, and whose select is
/// not and has no other use, as `select(c, fma(a, b, C1), fma(a, b, C2))`.
/// Returns whether `function` changed.
bool masksAfterDotWaits(llvm::Function &function);

} // namespace kiln

#endif // KILN_TARGET_MASKSAFTERDOTWAITS_H
