//===- StrengthReductionGate.h - skip SLSR where it would take seconds ----===//
//
// The NVPTX backend runs straight-line strength reduction (SLSR) on every
// function. LLVM 22's SLSR checks, for related candidates of a block
// (integer adds, multiplies, shifts and GEPs), whether reusing one value for
// another could add poison (ScalarEvolution::canReuseInstruction), and perf
// puts most of its time in that check's scans (mustTriggerUB,
// propagatesPoison): presumably long because Kiln's loads are inline asm,
// where no undefined behaviour stops them. On a block of thousands of
// candidates, the unrolled per-thread code of a large tile that is not
// vectorized (lightllm's 512x128 gather `_fwd_kernel_token_att2_int8v`:
// 2579 candidates), SLSR took 6 s of the backend's 6.6 s, for each of the
// two PTX candidates, and changed one instruction. Smaller blocks keep it:
// up to ~1400 candidates it took at most 1.4 s on the real-world corpus and
// often saved spills, and every benchmark kernel (at most ~180) compiles to
// the same PTX.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_STRENGTHREDUCTIONGATE_H
#define KILN_TARGET_STRENGTHREDUCTIONGATE_H

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/OptBisect.h"

namespace llvm {
class Function;
class LLVMContext;
class Module;
} // namespace llvm

namespace kiln {

/// Most SLSR candidates (integer add, mul, shl, or and GEP instructions) one
/// basic block may hold for SLSR to run on its function.
constexpr unsigned kMaxStrengthReductionCandidates = 2048;

/// Whether `function` has a basic block with more than
/// kMaxStrengthReductionCandidates SLSR candidates.
bool tooLargeForStrengthReduction(const llvm::Function &function);

/// While alive, makes the passes run in `context` skip SLSR on the functions
/// of `module` that are tooLargeForStrengthReduction (and on their copies
/// with the same names, in other modules of `context`); every other pass
/// runs as the context's previous gate decides. Restores that gate when
/// destroyed.
class StrengthReductionGate : public llvm::OptPassGate {
public:
  StrengthReductionGate(llvm::LLVMContext &context, const llvm::Module &module);
  ~StrengthReductionGate() override;
  StrengthReductionGate(const StrengthReductionGate &) = delete;
  StrengthReductionGate &operator=(const StrengthReductionGate &) = delete;

  bool shouldRunPass(llvm::StringRef passName,
                     llvm::StringRef irDescription) const override;
  bool isEnabled() const override;

private:
  llvm::LLVMContext &context;
  llvm::OptPassGate &previous;
  /// The IR descriptions of the functions that skip SLSR, as legacy passes
  /// describe them: "function (NAME)".
  llvm::StringSet<> skipped;
};

} // namespace kiln

#endif // KILN_TARGET_STRENGTHREDUCTIONGATE_H
