//===- Echelon.h - incremental GF(2) row echelon form -----------*- C++ -*-===//
//
// The one piece of linear algebra over GF(2) every layout computation needs:
// vectors of up to 64 bits added one at a time, with rank and "which of the
// added vectors sum to this one" answered on the way.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_ECHELON_H
#define KILN_LAYOUT_ECHELON_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"

#include <cstdint>
#include <optional>

namespace kiln::layout {

/// The XOR of `columns[i]` over the set bits i of `mask`: a GF(2) matrix,
/// given by its columns, times the vector `mask`.
template <typename T> T xorOfColumns(llvm::ArrayRef<T> columns, uint64_t mask) {
  T value = 0;
  for (auto [i, column] : llvm::enumerate(columns))
    if ((mask >> i) & 1)
      value ^= column;
  return value;
}

/// An incrementally built row-echelon basis of a set of GF(2) vectors, each
/// remembering which of the original vectors ("columns") it combines. Columns
/// are added in order; a column that is a combination of earlier ones adds
/// nothing (it is *free*); the others are *pivots*.
class Echelon {
public:
  /// Adds column `index` with value `value`; returns whether it is a pivot.
  bool add(uint64_t value, unsigned index) {
    uint64_t combination = uint64_t(1) << index;
    reduce(value, combination);
    if (value == 0)
      return false;
    Row row{value, combination, 63 - llvm::countl_zero(value)};
    auto pos =
        llvm::find_if(rows, [&](const Row &r) { return r.lead < row.lead; });
    rows.insert(pos, row);
    return true;
  }

  /// The combination of pivot columns equal to `target`, as a mask of column
  /// indices; std::nullopt if `target` is not in their span.
  std::optional<uint64_t> solve(uint64_t target) const {
    uint64_t combination = 0;
    reduce(target, combination);
    if (target != 0)
      return std::nullopt;
    return combination;
  }

  unsigned rank() const { return rows.size(); }

private:
  struct Row {
    uint64_t value;       // no bit above `lead` is set
    uint64_t combination; // columns whose XOR is `value`
    int lead;             // highest set bit; rows sorted by it, descending
  };

  void reduce(uint64_t &value, uint64_t &combination) const {
    for (const Row &row : rows) {
      if ((value >> row.lead) & 1) {
        value ^= row.value;
        combination ^= row.combination;
      }
    }
  }

  llvm::SmallVector<Row, 32> rows;
};

} // namespace kiln::layout

#endif // KILN_LAYOUT_ECHELON_H
