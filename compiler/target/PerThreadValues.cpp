//===- PerThreadValues.cpp - what the rematerializers may recompute -------===//
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

Instruction *kiln::opaqueSpecialRegisterRead(const Instruction &read,
                                             const std::string &special,
                                             Instruction &point) {
  auto *type = FunctionType::get(read.getType(), /*isVarArg=*/false);
  InlineAsm *asmRead = InlineAsm::get(type, "mov.u32 $0, " + special + ";",
                                      "=r", /*hasSideEffects=*/true);
  return CallInst::Create(asmRead, {}, read.getName() + ".remat",
                          point.getIterator());
}
