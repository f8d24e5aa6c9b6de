//===- PerThreadValues.cpp - trees the rematerializers recompute ----------===//
#include "compiler/target/PerThreadValues.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

std::string kiln::fixedSpecialRegister(const Instruction &inst) {
  const auto *call = dyn_cast<CallInst>(&inst);
  const Function *callee = call ? call->getCalledFunction() : nullptr;
  if (!callee || !callee->isIntrinsic() || !call->getType()->isIntegerTy(32))
    return "";
  StringRef name = callee->getName();
  if (!name.consume_front("llvm.nvvm.read.ptx.sreg."))
    return "";
  static constexpr StringLiteral kFixed[] = {
      "tid.x",    "tid.y",    "tid.z",   "ntid.x",  "ntid.y",
      "ntid.z",   "ctaid.x",  "ctaid.y", "ctaid.z", "nctaid.x",
      "nctaid.y", "nctaid.z", "laneid"};
  for (StringLiteral fixed : kFixed)
    if (name == fixed)
      return ("%" + name).str();
  return "";
}

bool kiln::isPureArithmetic(const Instruction &inst) {
  return isa<BinaryOperator, CastInst, CmpInst, SelectInst, GetElementPtrInst,
             ExtractElementInst, InsertElementInst, ShuffleVectorInst,
             FreezeInst>(inst);
}

kiln::TreeCloner::Tree kiln::TreeCloner::measure(const Instruction &value) {
  auto cached = measured.find(&value);
  if (cached != measured.end())
    return cached->second;
  Tree tree;
  tree.size = 1;
  if (!fixedSpecialRegister(value).empty()) {
    tree.perThread = true;
  } else if (!isPureArithmetic(value)) {
    tree.recomputable = false;
  } else {
    for (const Value *operand : value.operands()) {
      const auto *inst = dyn_cast<Instruction>(operand);
      if (!inst)
        continue; // constants, arguments
      if (!isNode(*inst)) {
        tree.perThread |= leafIsPerThread(*inst);
        continue;
      }
      Tree sub = measure(*inst);
      tree.recomputable &= sub.recomputable;
      tree.perThread |= sub.perThread;
      tree.size += sub.size;
    }
  }
  measured[&value] = tree;
  return tree;
}

Value *kiln::TreeCloner::cloneBefore(Instruction &value, Instruction &point,
                                     Clones &clones) {
  if (Value *clone = clones.lookup(&value))
    return clone;
  Instruction *clone;
  std::string special = fixedSpecialRegister(value);
  if (!special.empty()) {
    // Side effects keep the backend's CSE from folding it into the read
    // the tree was made from.
    auto *type = FunctionType::get(value.getType(), /*isVarArg=*/false);
    InlineAsm *read = InlineAsm::get(type, "mov.u32 $0, " + special + ";", "=r",
                                     /*hasSideEffects=*/true);
    clone = CallInst::Create(read, {}, value.getName() + ".remat",
                             point.getIterator());
  } else {
    clone = value.clone();
    for (Use &operand : clone->operands()) {
      auto *inst = dyn_cast<Instruction>(operand.get());
      if (!inst)
        continue;
      if (isNode(*inst))
        operand.set(cloneBefore(*inst, point, clones));
      else if (Value *copy = copyLeaf(*inst, point))
        operand.set(copy);
    }
    clone->setName(value.getName() + ".remat");
    clone->insertBefore(point.getIterator());
  }
  clones[&value] = clone;
  return clone;
}
