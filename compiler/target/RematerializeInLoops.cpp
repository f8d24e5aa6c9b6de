//===- RematerializeInLoops.cpp - recompute hoisted per-thread values -----===//
#include "compiler/target/RematerializeInLoops.h"

#include "compiler/target/PerThreadValues.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

/// Largest tree cloned for one use, as after loops.
constexpr unsigned kMaxTreeSize = 64;

class InLoopRematerializer {
public:
  explicit InLoopRematerializer(const LoopInfo &loops) : loops(loops) {}

  /// Whether `block` runs once per iteration of a loop, between the loops
  /// inside it: where a recomputed tree costs little.
  bool betweenInnerLoops(const BasicBlock *block) const {
    const Loop *loop = loops.getLoopFor(block);
    return loop && !loop->isInnermost();
  }

  /// A value a tree may recompute: outside every loop (where LICM puts
  /// what it hoists), pure arithmetic or a special register.
  bool isNode(const Value *value) const {
    const auto *inst = dyn_cast<Instruction>(value);
    return inst && !loops.getLoopFor(inst->getParent()) &&
           (kiln::isPureArithmetic(*inst) ||
            !kiln::fixedSpecialRegister(*inst).empty());
  }

  /// A root: a node each of whose users is either in a block between inner
  /// loops or another node.
  bool isRoot(const Instruction &value) const {
    if (!isNode(&value))
      return false;
    bool inLoop = false;
    for (const User *user : value.users()) {
      const auto *inst = cast<Instruction>(user);
      if (isa<PHINode>(inst))
        return false;
      if (betweenInnerLoops(inst->getParent()))
        inLoop = true;
      else if (!isNode(inst))
        return false;
    }
    return inLoop;
  }

  /// Replaces `operand` (a root's use in a block between inner loops) by
  /// a copy of its tree made before `user`, when the tree is worth it.
  void rematerialize(Use &operand, Instruction &user) {
    auto *value = cast<Instruction>(operand.get());
    Tree tree = measure(*value);
    if (!tree.recomputable || !tree.perThread || tree.size > kMaxTreeSize)
      return;
    operand.set(cloneBefore(*value, user));
    replaced.push_back(value);
  }

  SmallVector<WeakTrackingVH> replaced;

private:
  struct Tree {
    bool recomputable = true;
    /// Reads a special register: per-thread, where keeping it costs a
    /// register (a tree of constants and arguments is uniform).
    bool perThread = false;
    unsigned size = 0;
  };

  Tree measure(const Instruction &value) {
    auto cached = measured.find(&value);
    if (cached != measured.end())
      return cached->second;
    Tree tree;
    tree.size = 1;
    if (!kiln::fixedSpecialRegister(value).empty()) {
      tree.perThread = true;
    } else {
      for (const Value *operand : value.operands()) {
        if (!isNode(operand))
          continue; // constants, arguments, values alive anyway
        Tree sub = measure(*cast<Instruction>(operand));
        tree.recomputable &= sub.recomputable;
        tree.perThread |= sub.perThread;
        tree.size += sub.size;
      }
    }
    measured[&value] = tree;
    return tree;
  }

  /// The copy of `value` made in `point`'s block, before `point` the first
  /// time it is asked for (uses are visited in program order).
  Value *cloneBefore(Instruction &value, Instruction &point) {
    auto &clones = clonesByBlock[point.getParent()];
    if (Value *clone = clones.lookup(&value))
      return clone;
    Instruction *clone;
    std::string special = kiln::fixedSpecialRegister(value);
    if (!special.empty()) {
      clone = kiln::opaqueSpecialRegisterRead(value, special, point);
    } else {
      clone = value.clone();
      for (Use &operand : clone->operands())
        if (isNode(operand.get()))
          operand.set(cloneBefore(*cast<Instruction>(operand.get()), point));
      clone->setName(value.getName() + ".remat");
      clone->insertBefore(point.getIterator());
    }
    clones[&value] = clone;
    return clone;
  }

  const LoopInfo &loops;
  DenseMap<const Instruction *, Tree> measured;
  DenseMap<const BasicBlock *, DenseMap<const Instruction *, Value *>>
      clonesByBlock;
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
