//===- PerThreadValues.h - trees the rematerializers recompute --*- C++ -*-===//
//
// Both rematerializers (after loops, and between a loop's inner loops)
// recompute small trees of pure arithmetic over special registers,
// constants and arguments: a thread's coordinates, the per-element offsets
// and masks derived from them. Each says which instructions belong to a tree
// (its nodes); TreeCloner measures such trees and clones them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_PERTHREADVALUES_H
#define KILN_TARGET_PERTHREADVALUES_H

#include "llvm/ADT/DenseMap.h"
#include <functional>
#include <string>

namespace llvm {
class Instruction;
class Value;
} // namespace llvm

namespace kiln {

/// The PTX special register an intrinsic reads ("%tid.x"), for those fixed
/// for a thread's lifetime (not %warpid, which may change); "" otherwise.
std::string fixedSpecialRegister(const llvm::Instruction &inst);

/// Arithmetic without side effects or memory reads (casts, compares,
/// selects, address computations, vector element moves).
bool isPureArithmetic(const llvm::Instruction &inst);

/// Largest tree cloned for one use: address and mask arithmetic of a tile is
/// a few dozen instructions; anything larger is not worth recomputing.
constexpr unsigned kMaxRematerializedTree = 64;

/// Measures and clones trees. An instruction operand of a node that is no
/// node itself is a leaf, read as it is, or through the copy `copyLeaf`
/// makes of it before the clone (a side-effecting move that the backend's
/// CSE cannot fold back), where it makes one.
class TreeCloner {
public:
  struct Tree {
    bool recomputable = true;
    /// Reads a special register, or a leaf the caller counts as
    /// per-thread; a tree of constants and arguments only is uniform, and
    /// cheap to keep.
    bool perThread = false;
    unsigned size = 0;

    /// Worth recomputing: per-thread and small.
    bool worthIt() const {
      return recomputable && perThread && size <= kMaxRematerializedTree;
    }
  };
  /// The copies made at one place, by original.
  using Clones = llvm::DenseMap<const llvm::Instruction *, llvm::Value *>;

  using Predicate = std::function<bool(const llvm::Instruction &)>;
  using CopyLeaf = std::function<llvm::Value *(llvm::Instruction &leaf,
                                               llvm::Instruction &point)>;

  TreeCloner(Predicate isNode, Predicate leafIsPerThread, CopyLeaf copyLeaf)
      : isNode(std::move(isNode)), leafIsPerThread(std::move(leafIsPerThread)),
        copyLeaf(std::move(copyLeaf)) {}

  /// The tree of `value` (a node).
  Tree measure(const llvm::Instruction &value);

  /// The copy of `value` (a node) made before `point` the first time it is
  /// asked for at that place (`clones`: the copies made there); special
  /// registers are read again through side-effecting inline asm.
  llvm::Value *cloneBefore(llvm::Instruction &value, llvm::Instruction &point,
                           Clones &clones);

private:
  Predicate isNode;
  Predicate leafIsPerThread;
  CopyLeaf copyLeaf;
  llvm::DenseMap<const llvm::Instruction *, Tree> measured;
};

} // namespace kiln

#endif // KILN_TARGET_PERTHREADVALUES_H
