//===- PerThreadValues.h - what the rematerializers may recompute -*- C++ -*-=//
//
// Both rematerializers (after loops, and inside loops) recompute small trees
// of pure arithmetic over special registers, constants and arguments: a
// thread's coordinates, the per-element offsets and masks derived from them.
// These are the leaves and nodes such a tree may hold.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_PERTHREADVALUES_H
#define KILN_TARGET_PERTHREADVALUES_H

#include <string>

namespace llvm {
class Instruction;
} // namespace llvm

namespace kiln {

/// The PTX special register an intrinsic reads ("%tid.x"), for those fixed
/// for a thread's lifetime (not %warpid, which may change); "" otherwise.
std::string fixedSpecialRegister(const llvm::Instruction &inst);

/// Arithmetic without side effects or memory reads (casts, compares,
/// selects, address computations, vector element moves).
bool isPureArithmetic(const llvm::Instruction &inst);

/// A read of `special` (fixedSpecialRegister's spelling) through
/// side-effecting inline asm inserted before `point`, so that the backend's
/// CSE cannot fold it into the read elsewhere: a recomputed tree then stays
/// a separate computation.
llvm::Instruction *opaqueSpecialRegisterRead(const llvm::Instruction &read,
                                             const std::string &special,
                                             llvm::Instruction &point);

} // namespace kiln

#endif // KILN_TARGET_PERTHREADVALUES_H
