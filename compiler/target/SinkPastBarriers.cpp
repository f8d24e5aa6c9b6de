//===- SinkPastBarriers.cpp - scalar arithmetic next to its use -----------===//

#include "compiler/target/SinkPastBarriers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace {

/// A load of one scalar from global memory: an LLVM load, or Kiln's inline
/// `ld.global` of one register (kiln.load's lowering).
bool isScalarLoad(const Instruction &inst) {
  Type *type = inst.getType();
  if (!type->isIntOrPtrTy() && !type->isFloatingPointTy())
    return false;
  // Global memory only: shared-memory reads (a reduction's partial sums)
  // wait for their barrier, not a long latency.
  if (const auto *load = dyn_cast<LoadInst>(&inst))
    return load->getPointerAddressSpace() == 1;
  if (const auto *call = dyn_cast<CallInst>(&inst))
    if (const auto *asmCall = dyn_cast<InlineAsm>(call->getCalledOperand()))
      return StringRef(asmCall->getAsmString()).contains("ld.global");
  return false;
}

/// Reads the thread's index in its block (or lane, or warp).
bool readsThreadIndex(const Instruction &inst) {
  if (const auto *call = dyn_cast<CallInst>(&inst))
    if (const Function *callee = call->getCalledFunction()) {
      StringRef name = callee->getName();
      return name.starts_with("llvm.nvvm.read.ptx.sreg.tid") ||
             name.starts_with("llvm.nvvm.read.ptx.sreg.laneid") ||
             name.starts_with("llvm.nvvm.read.ptx.sreg.warpid");
    }
  return false;
}

bool isBarrier(const Instruction &inst) {
  if (const auto *call = dyn_cast<CallInst>(&inst)) {
    if (const Function *callee = call->getCalledFunction())
      return callee->getName().starts_with("llvm.nvvm.barrier");
    // Inline PTX barriers (bar.sync, barrier.sync) order just the same.
    if (const auto *asmCall = dyn_cast<InlineAsm>(call->getCalledOperand()))
      return StringRef(asmCall->getAsmString()).contains("bar");
  }
  return false;
}

/// The first user of `inst` in its block, where every user is later in the
/// block and is no PHI; null otherwise.
Instruction *firstUserInBlock(Instruction &inst) {
  Instruction *first = nullptr;
  for (User *user : inst.users()) {
    auto *userInst = dyn_cast<Instruction>(user);
    if (!userInst || userInst->getParent() != inst.getParent() ||
        isa<PHINode>(userInst))
      return nullptr;
    if (!first || userInst->comesBefore(first))
      first = userInst;
  }
  return first;
}

} // namespace

bool kiln::sinkPastBarriers(Function &function) {
  bool changed = false;
  // Values that differ between the threads of a block (from their thread
  // index), then values computed from a load every thread makes alike (its
  // address differs by none): what waits on a load's latency where placed.
  SmallPtrSet<const Instruction *, 32> perThread;
  SmallPtrSet<const Instruction *, 32> fromLoads;
  auto fromAny = [](const Instruction &inst,
                    const SmallPtrSet<const Instruction *, 32> &set) {
    return any_of(inst.operands(), [&](const Use &operand) {
      const auto *def = dyn_cast<Instruction>(operand.get());
      return def && set.contains(def);
    });
  };
  for (Instruction &inst : instructions(function)) {
    if (readsThreadIndex(inst) || fromAny(inst, perThread))
      perThread.insert(&inst);
    else if (isScalarLoad(inst))
      fromLoads.insert(&inst);
    if (fromAny(inst, fromLoads))
      fromLoads.insert(&inst);
  }
  for (BasicBlock &block : function) {
    // Bottom-up: an instruction whose user just moved down moves after it.
    for (Instruction &inst : make_early_inc_range(reverse(block))) {
      if (inst.isTerminator() || isa<PHINode>(inst) ||
          inst.getType()->isVectorTy() || inst.getType()->isVoidTy() ||
          inst.mayHaveSideEffects() || inst.mayReadFromMemory() ||
          isa<AllocaInst>(inst) || !fromLoads.contains(&inst))
        continue;
      Instruction *user = firstUserInBlock(inst);
      if (!user)
        continue;
      bool pastBarrier = false;
      for (Instruction *at = inst.getNextNode(); at != user;
           at = at->getNextNode())
        if (isBarrier(*at)) {
          pastBarrier = true;
          break;
        }
      if (!pastBarrier)
        continue;
      inst.moveBefore(user->getIterator());
      changed = true;
    }
  }
  return changed;
}
