//===- AxisInfo.h - contiguity, divisibility and constancy ----------------===//
//
// For every integer or pointer value, per dimension:
// - contiguity: the length of runs of consecutive values (x, x+1, ...),
// - divisibility: a power of two dividing the first value of each run
//   (bytes for pointers),
// - constancy: the length of runs of equal values.
// Global accesses are vectorized and coalesced from these facts.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_AXISINFO_H
#define KILN_TRANSFORMS_AXISINFO_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <unordered_map>

namespace kiln {

struct AxisInfo {
  /// One entry per dimension; scalars have one entry.
  llvm::SmallVector<int64_t> contiguity, divisibility, constancy;
  /// The value, when it is a known integer splat or scalar.
  std::optional<int64_t> constantValue;
  /// Every element is >= 0 (offsets built from program ids, ranges and
  /// non-negative constants): what makes x / c constant over aligned runs,
  /// since signed division truncates toward zero.
  bool nonNegative = false;

  /// Divisibility used for values known to be zero: any power of two.
  static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;
};

class AxisInfoAnalysis {
public:
  /// Computes the facts for every value defined inside `root`.
  explicit AxisInfoAnalysis(mlir::Operation *root);

  /// The facts about `value` (conservative when unknown). The reference stays
  /// valid as long as the analysis.
  const AxisInfo &get(mlir::Value value);

  /// How many consecutive elements along the fastest dimension of `ptr` one
  /// thread may access as one vector of at most `maxBits` (before layout
  /// limits), for elements of `elementBits`; `mask` (may be null) must be
  /// uniform over the vector.
  unsigned vectorWidth(mlir::Value ptr, mlir::Value mask, unsigned elementBits,
                       unsigned maxBits = 128);
  /// The same along dimension `dim` instead of the last.
  unsigned vectorWidthAlong(mlir::Value ptr, mlir::Value mask,
                            unsigned elementBits, size_t dim,
                            unsigned maxBits = 128);
  /// The runs of equal values, per dimension, that a load of `ptr` under
  /// `mask` with fall-back `other` (either may be null) reads: where the
  /// addresses, the mask and the fall-back all repeat. A splat `other`
  /// repeats everywhere.
  llvm::SmallVector<int64_t> loadedRuns(mlir::Value ptr, mlir::Value mask,
                                        mlir::Value other);

private:
  void visit(mlir::Operation *op);
  void visitRegion(mlir::Region &region);
  void visitFor(mlir::scf::ForOp loop);
  void visitWhile(mlir::scf::WhileOp loop);
  AxisInfo compute(mlir::Operation *op, mlir::Value result);
  AxisInfo conservative(mlir::Value value);

  struct ValueHash {
    size_t operator()(mlir::Value v) const { return mlir::hash_value(v); }
  };
  /// Node-based, so that the references get() returns stay valid while
  /// facts for other values are added: visit() and compute() hold several at
  /// once (an op's operands, a loop's carried value while its result is
  /// added). A DenseMap moves its entries when it grows, and did (issue 14).
  std::unordered_map<mlir::Value, AxisInfo, ValueHash> infos;
};

} // namespace kiln

#endif // KILN_TRANSFORMS_AXISINFO_H
