//===- RematerializeAfterLoops.cpp - recompute per-thread indices after loops //
#include "compiler/target/RematerializeAfterLoops.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

/// Largest tree cloned for one use: address and mask arithmetic of a tile is
/// a few dozen instructions; anything larger is not worth recomputing.
constexpr unsigned kMaxTreeSize = 64;

/// The PTX special register an intrinsic reads ("%tid.x"), for those fixed
/// for a thread's lifetime (not %warpid, which may change); "" otherwise.
std::string fixedSpecialRegister(const Instruction &inst) {
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

bool isPureArithmetic(const Instruction &inst) {
  return isa<BinaryOperator, CastInst, CmpInst, SelectInst, GetElementPtrInst,
             ExtractElementInst, InsertElementInst, ShuffleVectorInst,
             FreezeInst>(inst);
}

/// Recomputes, after one loop, values defined before it.
class LoopRematerializer {
public:
  LoopRematerializer(const Loop &loop, DominatorTree &dominators,
                     SmallVectorImpl<WeakTrackingVH> &replaced)
      : loop(loop), dominators(dominators), replaced(replaced) {}

  /// Replaces the operands of `user` (after the loop) that the loop would
  /// otherwise keep alive by recomputed copies; the values replaced go into
  /// `replaced`.
  void rematerializeOperandsOf(Instruction &user) {
    for (Use &operand : user.operands()) {
      auto *value = dyn_cast<Instruction>(operand.get());
      if (!value || !isCandidate(*value))
        continue;
      Tree tree = measure(*value);
      if (!tree.recomputable || !tree.readsSpecialRegister ||
          tree.size > kMaxTreeSize)
        continue;
      operand.set(cloneBefore(*value, user));
      replaced.push_back(value);
    }
  }

private:
  struct Tree {
    bool recomputable = true;
    bool readsSpecialRegister = false;
    unsigned size = 0;
  };

  /// Defined before the loop and not used in it: alive across the loop only
  /// for its uses after it.
  bool isCandidate(const Instruction &value) const {
    if (loop.contains(value.getParent()) ||
        !dominators.dominates(value.getParent(), loop.getHeader()))
      return false;
    for (const User *user : value.users())
      if (loop.contains(cast<Instruction>(user)->getParent()))
        return false;
    return true;
  }

  Tree measure(const Instruction &value) {
    auto cached = measured.find(&value);
    if (cached != measured.end())
      return cached->second;
    Tree tree;
    tree.size = 1;
    if (!fixedSpecialRegister(value).empty()) {
      tree.readsSpecialRegister = true;
    } else if (!isPureArithmetic(value)) {
      tree.recomputable = false;
    } else {
      for (const Value *operand : value.operands()) {
        const auto *inst = dyn_cast<Instruction>(operand);
        if (!inst || !isCandidate(*inst))
          continue; // constants, arguments, values alive anyway
        Tree sub = measure(*inst);
        tree.recomputable &= sub.recomputable;
        tree.readsSpecialRegister |= sub.readsSpecialRegister;
        tree.size += sub.size;
      }
    }
    measured[&value] = tree;
    return tree;
  }

  /// The copy of `value` for uses in `user`'s block, made before `user` the
  /// first time (users are visited in program order).
  Value *cloneBefore(Instruction &value, Instruction &user) {
    auto &clones = clonesByBlock[user.getParent()];
    if (Value *clone = clones.lookup(&value))
      return clone;
    Instruction *clone;
    std::string special = fixedSpecialRegister(value);
    if (!special.empty()) {
      // Side effects keep the backend's CSE from folding it into the read
      // before the loop.
      auto *type = FunctionType::get(value.getType(), /*isVarArg=*/false);
      InlineAsm *read = InlineAsm::get(type, "mov.u32 $0, " + special + ";",
                                       "=r", /*hasSideEffects=*/true);
      clone = CallInst::Create(read, {}, value.getName() + ".remat",
                               user.getIterator());
    } else {
      clone = value.clone();
      for (Use &operand : clone->operands()) {
        auto *inst = dyn_cast<Instruction>(operand.get());
        if (inst && isCandidate(*inst))
          operand.set(cloneBefore(*inst, user));
      }
      clone->setName(value.getName() + ".remat");
      clone->insertBefore(user.getIterator());
    }
    clones[&value] = clone;
    return clone;
  }

  const Loop &loop;
  DominatorTree &dominators;
  SmallVectorImpl<WeakTrackingVH> &replaced;
  DenseMap<const Instruction *, Tree> measured;
  DenseMap<const BasicBlock *, DenseMap<const Instruction *, Value *>>
      clonesByBlock;
};

} // namespace

/// The blocks control can reach after leaving `loop`, outside it.
static SmallPtrSet<const BasicBlock *, 16> blocksAfter(const Loop &loop) {
  SmallPtrSet<const BasicBlock *, 16> after;
  SmallVector<BasicBlock *> exits;
  loop.getExitBlocks(exits);
  SmallVector<const BasicBlock *> worklist(exits.begin(), exits.end());
  while (!worklist.empty()) {
    const BasicBlock *block = worklist.pop_back_val();
    if (loop.contains(block) || !after.insert(block).second)
      continue;
    for (const BasicBlock *next : successors(block))
      worklist.push_back(next);
  }
  return after;
}

bool kiln::rematerializeAfterLoops(Function &function,
                                   DominatorTree &dominators, LoopInfo &loops) {
  SmallVector<WeakTrackingVH> replaced;
  for (const Loop *loop : loops) { // outermost loops
    LoopRematerializer rematerializer(*loop, dominators, replaced);
    SmallPtrSet<const BasicBlock *, 16> after = blocksAfter(*loop);
    for (BasicBlock &block : function) {
      // Not inside another loop, where a copy would be recomputed on every
      // iteration.
      if (!after.contains(&block) || loops.getLoopFor(&block))
        continue;
      for (Instruction &inst : block)
        if (!isa<PHINode>(inst))
          rematerializer.rematerializeOperandsOf(inst);
    }
  }
  if (replaced.empty())
    return false;
  // The copies before the loop that lost their last use.
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(replaced);
  return true;
}
