// Unit tests of matrixRowsAccess (compiler/layout/MatrixRows.h) inside the
// exchange plan: a tensor written to the planned array by one layout and
// read back by an emulated ldmatrix.x4 (or written by an emulated
// stmatrix.x4), instruction by instruction as the lowering issues them,
// must land every element in the register the other layout gives it.

#include "compiler/layout/MatrixRows.h"

#include "compiler/layout/BlockedLayouts.h"
#include "compiler/layout/SharedSwizzle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace kiln::layout {
namespace {

using InDim = LinearLayout::InDim;

/// A distributed layout as an access of its row-major array.
LinearLayout rowMajor(const LinearLayout &tensorLayout) {
  llvm::SmallVector<std::string> names = tensorLayout.getOutDimNames();
  std::reverse(names.begin(), names.end());
  return tensorLayout.transposeOuts(names).reshapeOuts(
      {{std::string(kOffset), int32_t(tensorLayout.getTotalOutDimSize())}});
}

int32_t dimSize(const LinearLayout &layout, llvm::StringRef name) {
  return layout.hasInDim(name) ? layout.getInDimSize(name) : 1;
}

uint64_t offsetAt(const LinearLayout &layout, int32_t reg, int32_t lane,
                  int32_t warp) {
  std::vector<int32_t> in;
  for (const InDim &dim : layout.getInDims())
    in.push_back(dim.name == kRegister ? reg
                 : dim.name == kLane   ? lane
                 : dim.name == kWarp   ? warp
                                       : 0);
  return uint64_t(layout.apply(llvm::ArrayRef<int32_t>(in))[0]);
}

/// Writes `from` (row-major access) element by element, reads it back under
/// `to` with ldmatrix.x4 as exchangeThroughShared issues them; returns the
/// elements (row-major indices) each (warp, lane, register) of `to` got.
/// Fails the test where the plan does not give ldmatrix 16-byte rows.
void expectLdmatrixReadsBack(const LinearLayout &from, const LinearLayout &to,
                             bool transposed) {
  SharedAccess writer{rowMajor(from)}, target{rowMajor(to)};
  std::optional<LinearLayout> view =
      matrixRowsAccess(target.layout, transposed);
  ASSERT_TRUE(view.has_value());
  SharedAccess reader{*view};
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 2);
  ASSERT_EQ(plan.vectorOf(1), 8);
  LinearLayout write = writer.layout.compose(plan.swizzle);
  LinearLayout read = reader.layout.compose(plan.swizzle);
  std::map<uint64_t, uint64_t> memory; // physical index -> element
  for (int32_t w = 0; w < dimSize(write, kWarp); ++w)
    for (int32_t l = 0; l < dimSize(write, kLane); ++l)
      for (int32_t r = 0; r < dimSize(write, kRegister); ++r)
        memory[offsetAt(write, r, l, w)] = offsetAt(writer.layout, r, l, w);
  int32_t registers = dimSize(read, kRegister);
  for (int32_t w = 0; w < dimSize(read, kWarp); ++w)
    for (int32_t j = 0; j < registers / 8; ++j) {
      // Lane L names the row at its register 8j.
      std::vector<uint64_t> rows;
      for (int32_t lane = 0; lane < 32; ++lane) {
        uint64_t row = offsetAt(read, 8 * j, lane, w);
        ASSERT_EQ(row % 8, 0u) << "row not 16-byte aligned";
        rows.push_back(row);
      }
      for (int32_t l = 0; l < 32; ++l)
        for (int32_t m = 0; m < 4; ++m)
          for (int32_t b = 0; b < 2; ++b) {
            // Plain: row l/4 of matrix m, column 2(l%4)+b. Trans: column l/4
            // of the stored rows 2(l%4)+b.
            uint64_t at = transposed ? rows[8 * m + 2 * (l % 4) + b] + l / 4
                                     : rows[8 * m + l / 4] + 2 * (l % 4) + b;
            ASSERT_TRUE(memory.count(at)) << "read of an unwritten element";
            EXPECT_EQ(memory[at],
                      offsetAt(target.layout, 8 * j + 2 * m + b, l, w))
                << "warp " << w << " lane " << l << " register "
                << 8 * j + 2 * m + b;
          }
    }
}

TEST(MatrixRowsTest, LdmatrixReadsBlockedIntoMmaAccumulator) {
  // vLLM's LoRA expand: a blocked bf16 tile (4 elements a thread) added to
  // the accumulator.
  expectLdmatrixReadsBack(blocked({64, 128}, {1, 4}, {4, 8}, {4, 1}, {1, 0}),
                          mmaV2({64, 128}, {4, 1}), false);
  // Mamba-3's reloaded states: 8 elements a thread.
  expectLdmatrixReadsBack(blocked({64, 128}, {1, 8}, {4, 8}, {4, 1}, {1, 0}),
                          mmaV2({64, 128}, {4, 1}), false);
  expectLdmatrixReadsBack(blocked({64, 64}, {1, 8}, {8, 4}, {4, 1}, {1, 0}),
                          mmaV2({64, 64}, {2, 2}), false);
  expectLdmatrixReadsBack(blocked({128, 64}, {1, 2}, {2, 16}, {8, 1}, {1, 0}),
                          mmaV2({128, 64}, {8, 1}), false);
}

/// `layout` with its two dimensions' roles swapped: the tensor's last
/// (fastest) dimension becomes the layout's first.
LinearLayout columnMajor(const LinearLayout &layout) {
  llvm::SmallVector<std::string> names = layout.getOutDimNames();
  std::reverse(names.begin(), names.end());
  return layout.transposeOuts(names);
}

TEST(MatrixRowsTest, LdmatrixTransReadsColumnsIntoMmaAccumulator) {
  // The accumulator of a tensor stored column-major: its registers run
  // along the rows, which ldmatrix .trans reads 16 bytes at a time.
  expectLdmatrixReadsBack(
      columnMajor(blocked({64, 128}, {8, 1}, {8, 4}, {1, 4}, {0, 1})),
      columnMajor(mmaV2({64, 128}, {4, 1})), true);
}

TEST(MatrixRowsTest, NoViewWithoutWholeWarps) {
  // Fewer than 8 registers a thread.
  EXPECT_FALSE(
      matrixRowsAccess(rowMajor(mmaV2({16, 8}, {1, 1})), false).has_value());
}

} // namespace
} // namespace kiln::layout
