#include "compiler/target/HalfMulAdds.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

using namespace llvm;

namespace {

/// `value` as an fmul of `block`, or null.
BinaryOperator *multiplyIn(Value *value, BasicBlock *block) {
  auto *mul = dyn_cast<BinaryOperator>(value);
  if (!mul || mul->getOpcode() != Instruction::FMul ||
      mul->getParent() != block)
    return nullptr;
  return mul;
}

} // namespace

bool kiln::formHalfMulAdds(Function &function) {
  SmallVector<BinaryOperator *> sums;
  for (Instruction &inst : instructions(function)) {
    auto *sum = dyn_cast<BinaryOperator>(&inst);
    if (!sum || (sum->getOpcode() != Instruction::FAdd &&
                 sum->getOpcode() != Instruction::FSub))
      continue;
    Type *type = sum->getType();
    if (type->isHalfTy() || type->isBFloatTy())
      sums.push_back(sum);
  }
  bool changed = false;
  for (BinaryOperator *sum : sums) {
    BasicBlock *block = sum->getParent();
    Value *lhs = sum->getOperand(0), *rhs = sum->getOperand(1);
    bool subtract = sum->getOpcode() == Instruction::FSub;
    BinaryOperator *mul = multiplyIn(lhs, block);
    bool mulOnLeft = mul != nullptr;
    if (!mul)
      mul = multiplyIn(rhs, block);
    if (!mul)
      continue;
    IRBuilder<> builder(sum);
    builder.setFastMathFlags(sum->getFastMathFlags());
    Value *a = mul->getOperand(0), *b = mul->getOperand(1);
    Value *addend = mulOnLeft ? rhs : lhs;
    if (subtract && mulOnLeft)
      addend = builder.CreateFNeg(addend);
    else if (subtract)
      a = builder.CreateFNeg(a);
    Value *fused = builder.CreateIntrinsic(Intrinsic::fmuladd, {sum->getType()},
                                           {a, b, addend});
    fused->takeName(sum);
    sum->replaceAllUsesWith(fused);
    sum->eraseFromParent();
    if (mul->use_empty())
      mul->eraseFromParent();
    changed = true;
  }
  return changed;
}
