//===- InlineAsmRegisters.h - tl.inline_asm_elementwise's register rule ---===//
//
// The user's PTX of tl.inline_asm_elementwise runs once per group of `pack`
// elements, and its constraint string names one register per 32 bits of
// narrow elements (four u8 in one `r`) and one per wider element, as
// upstream Triton passes them. The front end checks the constraint count
// with this rule and the lowering packs the registers by it, so the two
// cannot disagree (a count LLVM does not expect crashes it).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_INLINEASMREGISTERS_H
#define KILN_IR_INLINEASMREGISTERS_H

#include <algorithm>

namespace kiln {

/// How many elements of `bits` bits share one register in a group of `pack`.
inline unsigned inlineAsmElementsPerRegister(unsigned bits, unsigned pack) {
  return std::min(pack, std::max(1u, 32 / bits));
}

/// The registers a group of `pack` elements of `bits` bits takes.
inline unsigned inlineAsmRegistersPerGroup(unsigned bits, unsigned pack) {
  return pack / inlineAsmElementsPerRegister(bits, pack);
}

} // namespace kiln

#endif // KILN_IR_INLINEASMREGISTERS_H
