//===- MasksAfterDotWaits.cpp - additive masks applied after wgmma waits --===//

#include "compiler/target/MasksAfterDotWaits.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

using namespace llvm;

namespace {

bool isDotWait(const Instruction &inst) {
  auto *call = dyn_cast<CallInst>(&inst);
  auto *asmCall =
      call ? dyn_cast<InlineAsm>(call->getCalledOperand()) : nullptr;
  return asmCall &&
         StringRef(asmCall->getAsmString()).contains("wgmma.wait_group");
}

} // namespace

bool kiln::masksAfterDotWaits(Function &function) {
  bool changed = false;
  for (BasicBlock &block : function) {
    // Per instruction of the block, in order: whether it is computed from a
    // wait's results (operands from other blocks are not).
    DenseMap<const Instruction *, bool> afterWait;
    auto computedAfterWait = [&](const Value *value) {
      auto *inst = dyn_cast<Instruction>(value);
      return inst && inst->getParent() == &block && afterWait.lookup(inst);
    };
    bool anyWait = false;
    for (Instruction &inst : block) {
      bool after =
          isDotWait(inst) || any_of(inst.operands(), [&](const Use &operand) {
            return computedAfterWait(operand.get());
          });
      afterWait[&inst] = after;
      anyWait |= after;
    }
    if (!anyWait)
      continue;
    for (Instruction &inst : make_early_inc_range(block)) {
      if (inst.getOpcode() != Instruction::FAdd)
        continue;
      for (unsigned i = 0; i < 2; ++i) {
        auto *product = dyn_cast<BinaryOperator>(inst.getOperand(1 - i));
        auto *mask = dyn_cast<SelectInst>(inst.getOperand(i));
        // A select several sums share (a mask along one dimension, or a
        // scalar one) is one register through the wait, where each of its
        // sums would take one more fma: left alone (SageAttention's
        // per-block bound, 1.055 -> 1.032 of Triton on the H200 otherwise).
        if (!product || product->getOpcode() != Instruction::FMul || !mask ||
            !mask->hasOneUse() || !isa<ConstantFP>(mask->getTrueValue()) ||
            !isa<ConstantFP>(mask->getFalseValue()) ||
            !computedAfterWait(product) || computedAfterWait(mask))
          continue;
        // The back end contracts a * b + mask into fma(a, b, mask)
        // (FPOpFusion::Fast, aggressively on NVPTX): each arm is that fma
        // on one of the constants. (Two fadds of one x would not do: the
        // DAG combiner makes them one fadd of a select again.)
        IRBuilder<> b(&inst);
        b.setFastMathFlags(inst.getFastMathFlags());
        auto arm = [&](Value *constant) {
          return b.CreateIntrinsic(
              Intrinsic::fma, {inst.getType()},
              {product->getOperand(0), product->getOperand(1), constant});
        };
        Value *ifTrue = arm(mask->getTrueValue());
        Value *ifFalse = arm(mask->getFalseValue());
        Value *select = b.CreateSelect(mask->getCondition(), ifTrue, ifFalse);
        for (Value *made : {ifTrue, ifFalse, select})
          if (auto *madeInst = dyn_cast<Instruction>(made)) {
            madeInst->setDebugLoc(inst.getDebugLoc());
            afterWait[madeInst] = true;
          }
        select->takeName(&inst);
        inst.replaceAllUsesWith(select);
        inst.eraseFromParent();
        mask->eraseFromParent();
        if (product->use_empty())
          product->eraseFromParent();
        changed = true;
        break;
      }
    }
  }
  return changed;
}
