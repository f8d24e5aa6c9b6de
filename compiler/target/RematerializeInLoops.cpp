//===- RematerializeInLoops.cpp - recompute hoisted per-thread values -----===//
#include "compiler/target/RematerializeInLoops.h"

#include "compiler/target/PerThreadValues.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

class InLoopRematerializer {
public:
  explicit InLoopRematerializer(const LoopInfo &loops)
      : loops(loops),
        trees([this](const Instruction &inst) { return isNode(inst); },
              [](const Instruction &) { return false; },
              [](Instruction &, Instruction &) -> Value * { return nullptr; }) {
  }

  /// Whether `block` runs once per iteration of a loop, between the loops
  /// inside it: where a recomputed tree costs little.
  bool betweenInnerLoops(const BasicBlock *block) const {
    const Loop *loop = loops.getLoopFor(block);
    return loop && !loop->isInnermost();
  }

  /// A root: a node each of whose users is either in a block between inner
  /// loops or another node.
  bool isRoot(const Instruction &value) const {
    if (!isNode(value))
      return false;
    bool inLoop = false;
    for (const User *user : value.users()) {
      const auto *inst = cast<Instruction>(user);
      if (isa<PHINode>(inst))
        return false;
      if (betweenInnerLoops(inst->getParent()))
        inLoop = true;
      else if (!isNode(*inst))
        return false;
    }
    return inLoop;
  }

  /// Replaces `operand` (a root's use in a block between inner loops) by
  /// a copy of its tree made before `user`, once per block, when the tree
  /// is worth it.
  void rematerialize(Use &operand, Instruction &user) {
    auto *value = cast<Instruction>(operand.get());
    if (!trees.measure(*value).worthIt())
      return;
    operand.set(
        trees.cloneBefore(*value, user, clonesByBlock[user.getParent()]));
    replaced.push_back(value);
  }

  SmallVector<WeakTrackingVH> replaced;

private:
  /// A value a tree may recompute: outside every loop (where LICM puts
  /// what it hoists), pure arithmetic or a special register. Other
  /// operands are read as they are.
  bool isNode(const Instruction &inst) const {
    return !loops.getLoopFor(inst.getParent()) &&
           (kiln::isPureArithmetic(inst) ||
            !kiln::fixedSpecialRegister(inst).empty());
  }

  const LoopInfo &loops;
  kiln::TreeCloner trees;
  DenseMap<const BasicBlock *, kiln::TreeCloner::Clones> clonesByBlock;
};

} // namespace

bool kiln::rematerializeInLoops(Function &function, LoopInfo &loops) {
  if (loops.empty())
    return false;
  InLoopRematerializer rematerializer(loops);
  for (BasicBlock &block : function) {
    if (!rematerializer.betweenInnerLoops(&block))
      continue;
    for (Instruction &inst : block) {
      for (Use &operand : inst.operands()) {
        auto *value = dyn_cast<Instruction>(operand.get());
        if (value && rematerializer.isRoot(*value))
          rematerializer.rematerialize(operand, inst);
      }
    }
  }
  if (rematerializer.replaced.empty())
    return false;
  // The trees before the loops that lost their last use.
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(rematerializer.replaced);
  return true;
}
