//===- StrengthReductionGate.cpp - skip SLSR where it would take seconds --===//
#include "compiler/target/StrengthReductionGate.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

using namespace llvm;

/// The instructions SLSR makes candidates of: B + i * S (add, or disjoint),
/// (B + i) * S (mul, shl) and &B[i * S] (GEP).
static bool isCandidate(const Instruction &inst) {
  switch (inst.getOpcode()) {
  case Instruction::Add:
  case Instruction::Mul:
  case Instruction::Shl:
  case Instruction::Or:
    return inst.getType()->isIntegerTy();
  case Instruction::GetElementPtr:
    return true;
  default:
    return false;
  }
}

bool kiln::tooLargeForStrengthReduction(const Function &function) {
  for (const BasicBlock &block : function) {
    unsigned candidates = 0;
    for (const Instruction &inst : block)
      if (isCandidate(inst) && ++candidates > kMaxStrengthReductionCandidates)
        return true;
  }
  return false;
}

kiln::StrengthReductionGate::StrengthReductionGate(LLVMContext &context,
                                                   const Module &module)
    : context(context), previous(context.getOptPassGate()) {
  for (const Function &function : module)
    if (!function.isDeclaration() && tooLargeForStrengthReduction(function))
      skipped.insert(("function (" + function.getName() + ")").str());
  context.setOptPassGate(*this);
}

kiln::StrengthReductionGate::~StrengthReductionGate() {
  context.setOptPassGate(previous);
}

bool kiln::StrengthReductionGate::isEnabled() const {
  return !skipped.empty() || previous.isEnabled();
}

bool kiln::StrengthReductionGate::shouldRunPass(StringRef passName,
                                                StringRef irDescription) const {
  // Legacy passes name themselves by their argument ("slsr") or, in older
  // LLVMs, their description.
  if ((passName == "slsr" || passName == "Straight line strength reduction") &&
      skipped.contains(irDescription))
    return false;
  return !previous.isEnabled() ||
         previous.shouldRunPass(passName, irDescription);
}
