//===- RematerializeAfterLoops.cpp - recompute per-thread indices after loops //
#include "compiler/target/RematerializeAfterLoops.h"

#include "compiler/target/PerThreadValues.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;
using kiln::fixedSpecialRegister;
using kiln::isPureArithmetic;

namespace {

/// Largest tree cloned for one use: address and mask arithmetic of a tile is
/// a few dozen instructions; anything larger is not worth recomputing.
constexpr unsigned kMaxTreeSize = 64;

/// Recomputes, after one loop, values defined before it.
class LoopRematerializer {
public:
  LoopRematerializer(const Loop &loop, DominatorTree &dominators,
                     SmallVectorImpl<WeakTrackingVH> &replaced)
      : loop(loop), dominators(dominators), replaced(replaced) {}

  /// Replaces `operand`, used after the loop, by a recomputed copy made
  /// before `insertBefore` when the loop would otherwise keep its value
  /// alive; the value replaced goes into `replaced`.
  void rematerialize(Use &operand, Instruction &insertBefore) {
    auto *value = dyn_cast<Instruction>(operand.get());
    if (!value || !isCandidate(*value))
      return;
    Tree tree = measure(*value);
    if (!tree.recomputable || !tree.perThread || tree.size > kMaxTreeSize)
      return;
    operand.set(cloneBefore(*value, insertBefore));
    replaced.push_back(value);
  }

private:
  struct Tree {
    bool recomputable = true;
    /// Reads a special register or a value the loop keeps alive, as
    /// per-thread values do; a tree of constants and arguments only is
    /// uniform, and cheap to keep.
    bool perThread = false;
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
      tree.perThread = true;
    } else if (!isPureArithmetic(value)) {
      tree.recomputable = false;
    } else {
      for (const Value *operand : value.operands()) {
        const auto *inst = dyn_cast<Instruction>(operand);
        if (!inst)
          continue; // constants, arguments
        if (!isCandidate(*inst)) {
          // Alive anyway: read through an opaque copy (opaqueCopy).
          tree.perThread |= opaqueConstraint(inst->getType()) != nullptr;
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

  /// The copy of `value` made before `point` the first time it is asked for
  /// (points in one block are asked for in program order, and a block's
  /// terminator only after them).
  Value *cloneBefore(Instruction &value, Instruction &point) {
    auto &clones = copiesAt(point);
    if (Value *clone = clones.lookup(&value))
      return clone;
    Instruction *clone;
    std::string special = fixedSpecialRegister(value);
    if (!special.empty()) {
      // Side effects keep the backend's CSE from folding it into the read
      // before the loop.
      clone = kiln::opaqueSpecialRegisterRead(value, special, point);
    } else {
      clone = value.clone();
      for (Use &operand : clone->operands()) {
        auto *inst = dyn_cast<Instruction>(operand.get());
        if (inst && isCandidate(*inst))
          operand.set(cloneBefore(*inst, point));
        else if (inst && opaqueConstraint(inst->getType()))
          operand.set(opaqueCopy(*inst, point));
      }
      clone->setName(value.getName() + ".remat");
      clone->insertBefore(point.getIterator());
    }
    clones[&value] = clone;
    return clone;
  }

  /// A copy of `value` (alive anyway) made before `point` through a
  /// side-effecting move, so that the backend's CSE cannot fold the clones
  /// that read it into the copies before the loop (`base + 2048` recomputed
  /// after the loop is otherwise merged back into the one before it).
  Value *opaqueCopy(Instruction &value, Instruction &point) {
    auto &clones = copiesAt(point);
    if (Value *copy = clones.lookup(&value))
      return copy;
    Type *type = value.getType();
    const char *constraint = opaqueConstraint(type);
    std::string asmText =
        type->isIntegerTy(64) ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;";
    auto *fnType = FunctionType::get(type, {type}, /*isVarArg=*/false);
    InlineAsm *move =
        InlineAsm::get(fnType, asmText, constraint, /*hasSideEffects=*/true);
    Instruction *copy = CallInst::Create(
        move, {&value}, value.getName() + ".opaque", point.getIterator());
    clones[&value] = copy;
    return copy;
  }

  /// The inline-asm constraints of a move of `type`, for the integer types
  /// of registers; null for others.
  static const char *opaqueConstraint(Type *type) {
    if (type->isIntegerTy(32))
      return "=r,r";
    if (type->isIntegerTy(64))
      return "=l,l";
    return nullptr;
  }

  /// The copies made before `point`: one map per block for the points
  /// inside it, another for its terminator.
  DenseMap<const Instruction *, Value *> &copiesAt(const Instruction &point) {
    return clonesByBlock[{point.getParent(), unsigned(point.isTerminator())}];
  }

  const Loop &loop;
  DominatorTree &dominators;
  SmallVectorImpl<WeakTrackingVH> &replaced;
  DenseMap<const Instruction *, Tree> measured;
  /// Copies by (block, made before its terminator).
  DenseMap<std::pair<const BasicBlock *, unsigned>,
           DenseMap<const Instruction *, Value *>>
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

/// Where a copy for a use of `operand` by `user` after a loop goes: before
/// the user; for a phi, before the incoming block's terminator; for a user
/// inside a later loop, before that loop's preheader's terminator, so that
/// the copy is made once and alive only while the later loop runs (the
/// second loop of a causal attention, reading the tiles' offsets the first
/// one does not). Null where no such place is outside every loop.
static Instruction *copyPoint(const Use &operand, Instruction &user,
                              const LoopInfo &loops) {
  BasicBlock *block = user.getParent();
  Instruction *point = &user;
  if (auto *phi = dyn_cast<PHINode>(&user)) {
    block = phi->getIncomingBlock(operand);
    point = block->getTerminator();
  }
  if (const Loop *later = loops.getLoopFor(block)) {
    while (later->getParentLoop())
      later = later->getParentLoop();
    block = later->getLoopPreheader();
    if (!block)
      return nullptr;
    point = block->getTerminator();
  }
  return loops.getLoopFor(block) ? nullptr : point;
}

bool kiln::rematerializeAfterLoops(Function &function,
                                   DominatorTree &dominators, LoopInfo &loops) {
  SmallVector<WeakTrackingVH> replaced;
  for (const Loop *loop : loops) { // outermost loops
    LoopRematerializer rematerializer(*loop, dominators, replaced);
    SmallPtrSet<const BasicBlock *, 16> after = blocksAfter(*loop);
    // Uses in program order, those placed at a block's terminator last.
    SmallVector<std::pair<Use *, Instruction *>> atTerminators;
    for (BasicBlock &block : function) {
      if (!after.contains(&block))
        continue;
      for (Instruction &inst : block) {
        for (Use &operand : inst.operands()) {
          Instruction *point = copyPoint(operand, inst, loops);
          if (!point || !after.contains(point->getParent()))
            continue;
          if (point->isTerminator())
            atTerminators.push_back({&operand, point});
          else
            rematerializer.rematerialize(operand, *point);
        }
      }
    }
    for (auto [operand, point] : atTerminators)
      rematerializer.rematerialize(*operand, *point);
  }
  if (replaced.empty())
    return false;
  // The copies before the loop that lost their last use.
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(replaced);
  return true;
}
