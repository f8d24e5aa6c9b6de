//===- HalfMulAdds.h - 16-bit float multiply-adds as llvm.fmuladd ---------===//
//
// The NVPTX backend contracts a * b + c into one fma (Kiln allows FP fusion,
// as upstream Triton does by default), but only while both are scalar ops
// in one block. The SLP vectorizer pairs 16-bit float ops into f16x2/bf16x2
// instructions first, and a paired multiply whose adds stayed scalar can no
// longer be contracted: lightllm's decode attention went from 56 fma.rn.f16
// to 8 mul.f16x2, 40 fma and 48 add, 4.5% slower. Written as llvm.fmuladd
// before the vectorizer, each pair stays one instruction, and SLP can pair
// the multiply-adds themselves (fma.rn.f16x2).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_HALFMULADDS_H
#define KILN_TARGET_HALFMULADDS_H

namespace llvm {
class Function;
} // namespace llvm

namespace kiln {

/// Rewrites each scalar half or bfloat fadd/fsub of which an operand is an
/// fmul of the same block into llvm.fmuladd (the backend's contraction:
/// a*b + c, c + a*b, a*b - c as fmuladd(a, b, -c), c - a*b as
/// fmuladd(-a, b, c)). An fmul left without users is erased. Returns
/// whether `function` changed.
bool formHalfMulAdds(llvm::Function &function);

} // namespace kiln

#endif // KILN_TARGET_HALFMULADDS_H
