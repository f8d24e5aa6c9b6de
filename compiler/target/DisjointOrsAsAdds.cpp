//===- DisjointOrsAsAdds.cpp - x | c with disjoint bits back to x + c -----===//

#include "compiler/target/DisjointOrsAsAdds.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

bool kiln::disjointOrsAsAdds(Function &function) {
  bool changed = false;
  for (Instruction &inst : make_early_inc_range(instructions(function))) {
    auto *disjoint = dyn_cast<PossiblyDisjointInst>(&inst);
    if (!disjoint || !disjoint->isDisjoint() ||
        !isa<ConstantInt>(inst.getOperand(1)))
      continue;
    auto *add = BinaryOperator::CreateAdd(
        inst.getOperand(0), inst.getOperand(1), "", inst.getIterator());
    add->setHasNoUnsignedWrap();
    add->setHasNoSignedWrap();
    add->takeName(&inst);
    add->setDebugLoc(inst.getDebugLoc());
    inst.replaceAllUsesWith(add);
    inst.eraseFromParent();
    changed = true;
  }
  return changed;
}
