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

namespace {

/// Recomputes, after one loop, values defined before it.
class LoopRematerializer {
public:
  LoopRematerializer(const Loop &loop, DominatorTree &dominators,
                     SmallVectorImpl<WeakTrackingVH> &replaced)
      : loop(loop), dominators(dominators), replaced(replaced),
        trees([this](const Instruction &inst) { return isCandidate(inst); },
              [](const Instruction &leaf) {
                // Alive anyway: read through an opaque copy.
                return opaqueConstraint(leaf.getType()) != nullptr;
              },
              [this](Instruction &leaf, Instruction &point) {
                return opaqueConstraint(leaf.getType())
                           ? opaqueCopy(leaf, point)
                           : nullptr;
              }) {}

  /// Replaces `operand`, used after the loop, by a recomputed copy made
  /// before `insertBefore` when the loop would otherwise keep its value
  /// alive; the value replaced goes into `replaced`.
  void rematerialize(Use &operand, Instruction &insertBefore) {
    auto *value = dyn_cast<Instruction>(operand.get());
    if (!value || !isCandidate(*value) || !trees.measure(*value).worthIt())
      return;
    operand.set(
        trees.cloneBefore(*value, insertBefore, copiesAt(insertBefore)));
    replaced.push_back(value);
  }

private:
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

  /// A copy of `value` (alive anyway) made before `point` through a
  /// side-effecting move, so that the backend's CSE cannot fold the clones
  /// that read it into the copies before the loop (`base + 2048` recomputed
  /// after the loop is otherwise merged back into the one before it).
  Value *opaqueCopy(Instruction &value, Instruction &point) {
    kiln::TreeCloner::Clones &clones = copiesAt(point);
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
  kiln::TreeCloner::Clones &copiesAt(const Instruction &point) {
    return clonesByBlock[{point.getParent(), unsigned(point.isTerminator())}];
  }

  const Loop &loop;
  DominatorTree &dominators;
  SmallVectorImpl<WeakTrackingVH> &replaced;
  kiln::TreeCloner trees;
  /// Copies by (block, made before its terminator).
  DenseMap<std::pair<const BasicBlock *, unsigned>, kiln::TreeCloner::Clones>
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
