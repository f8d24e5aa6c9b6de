// Unit tests of the tensor cores' swizzled shared tiles
// (compiler/layout/NvmmaShared.h): every element has its own bytes, the
// 16-byte chunks a warp's cp.async writes or an ldmatrix reads in one phase
// hit eight different bank groups, and the swizzle is the hardware's
// address-bit XOR (so a descriptor advanced along K reads the right bytes).

#include "compiler/layout/NvmmaShared.h"

#include "compiler/layout/BlockedLayouts.h"
#include "compiler/layout/LinearLayout.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

namespace kiln::layout {
namespace {

struct Case {
  int64_t rows, cols;
  unsigned elementBytes, swizzle;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (unsigned swizzle : {32u, 64u, 128u})
    for (unsigned bytes : {1u, 2u, 4u})
      for (int64_t rows : {8, 16, 64, 128})
        for (int64_t rowBytes :
             {int64_t(swizzle), int64_t(2 * swizzle), int64_t(4 * swizzle)})
          all.push_back({rows, rowBytes / bytes, bytes, swizzle});
  return all;
}

/// 16-byte chunks hold 4 of the 32 four-byte banks: a chunk's bank group.
int64_t bankGroup(int64_t offset) { return (offset >> 4) & 7; }

TEST(NvmmaSharedTest, EveryElementHasItsOwnBytes) {
  for (const Case &c : cases()) {
    NvmmaShared tile{c.rows, c.cols, c.elementBytes, c.swizzle};
    std::set<int64_t> seen;
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.cols; ++col) {
        int64_t at = tile.offset(r, col);
        ASSERT_GE(at, 0);
        ASSERT_LT(at, c.rows * c.cols * c.elementBytes);
        ASSERT_TRUE(seen.insert(at).second)
            << "rows " << c.rows << " cols " << c.cols << " swizzle "
            << c.swizzle << " (" << r << ", " << col << ")";
      }
  }
}

TEST(NvmmaSharedTest, ChunksStayWholeAndAligned) {
  // A 16-byte chunk of a row (what one cp.async or ldmatrix row moves) stays
  // 16 contiguous, aligned bytes after the swizzle.
  for (const Case &c : cases()) {
    NvmmaShared tile{c.rows, c.cols, c.elementBytes, c.swizzle};
    int64_t perChunk = 16 / c.elementBytes;
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.cols; col += perChunk) {
        int64_t first = tile.offset(r, col);
        ASSERT_EQ(first % 16, 0);
        for (int64_t i = 1; i < perChunk; ++i)
          ASSERT_EQ(tile.offset(r, col + i), first + i * c.elementBytes);
      }
  }
}

TEST(NvmmaSharedTest, LdmatrixPhasesAreConflictFree) {
  // ldmatrix: eight lanes give the rows of one 8x8 matrix, the same chunk
  // column of eight consecutive rows.
  for (const Case &c : cases()) {
    NvmmaShared tile{c.rows, c.cols, c.elementBytes, c.swizzle};
    int64_t perChunk = 16 / c.elementBytes;
    for (int64_t r0 = 0; r0 < c.rows; r0 += 8)
      for (int64_t col = 0; col < c.cols; col += perChunk) {
        std::set<int64_t> groups;
        for (int64_t r = r0; r < r0 + 8; ++r)
          groups.insert(bankGroup(tile.offset(r, col)));
        EXPECT_EQ(groups.size(), 8u)
            << "swizzle " << c.swizzle << " rows " << r0 << ".. col " << col;
      }
  }
}

TEST(NvmmaSharedTest, CopyPhasesAreConflictFree) {
  // cp.async of 16 bytes: eight consecutive lanes write eight consecutive
  // chunks of the tile in row-major order (a coalesced blocked layout). Rows
  // span several panels only at 128 bytes, as kiln-pipeline-dots chooses
  // (swizzle = min(128, row bytes)): narrower panels side by side would
  // share bank groups.
  for (const Case &c : cases()) {
    if (c.cols * c.elementBytes > c.swizzle && c.swizzle != 128)
      continue;
    NvmmaShared tile{c.rows, c.cols, c.elementBytes, c.swizzle};
    int64_t perChunk = 16 / c.elementBytes;
    int64_t chunksPerRow = c.cols / perChunk;
    int64_t chunks = c.rows * chunksPerRow;
    for (int64_t first = 0; first + 8 <= chunks; first += 8) {
      std::set<int64_t> groups;
      for (int64_t i = first; i < first + 8; ++i)
        groups.insert(bankGroup(
            tile.offset(i / chunksPerRow, (i % chunksPerRow) * perChunk)));
      EXPECT_EQ(groups.size(), 8u) << "swizzle " << c.swizzle;
    }
  }
}

TEST(NvmmaSharedTest, SwizzleIsTheHardwareAddressXor) {
  // 128B: bits 4-6 ^= bits 7-9; 64B: bits 4-5 ^= 7-8; 32B: bit 4 ^= bit 7.
  NvmmaShared s128{64, 64, 2, 128}, s64{64, 32, 2, 64}, s32{64, 16, 2, 32};
  for (int64_t a = 0; a < 8192; a += 16) {
    EXPECT_EQ(s128.swizzled(a), a ^ (((a >> 7) & 7) << 4));
    EXPECT_EQ(s64.swizzled(a), a ^ (((a >> 7) & 3) << 4));
    EXPECT_EQ(s32.swizzled(a), a ^ (((a >> 7) & 1) << 4));
  }
  // Panels: a 256-byte row of fp16 at 128B swizzle is two panels, the
  // second a whole panel (rows x 128 bytes) further.
  NvmmaShared wide{64, 128, 2, 128};
  EXPECT_EQ(wide.linearOffset(0, 64), 64 * 128);
  EXPECT_EQ(wide.linearOffset(3, 65), 64 * 128 + 3 * 128 + 2);
  EXPECT_EQ(wide.panelStride(), 64 * 128);
}

TEST(NvmmaSharedTest, TransposedIsTheTransposeTile) {
  // A column-major tile is laid out as its transpose would be row-major.
  for (const Case &c : cases()) {
    NvmmaShared rowMajor{c.rows, c.cols, c.elementBytes, c.swizzle};
    NvmmaShared colMajor{c.cols, c.rows, c.elementBytes, c.swizzle, true};
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.cols; ++col)
        ASSERT_EQ(colMajor.offset(col, r), rowMajor.offset(r, col));
  }
}

TEST(NvmmaSharedTest, AgreesWithTheLinearLayout) {
  // The arithmetic the lowerings emit and layout::nvmmaShared (offset ->
  // coordinates over GF(2)) describe the same bytes.
  for (const Case &c : cases()) {
    NvmmaShared tile{c.rows, c.cols, c.elementBytes, c.swizzle};
    LinearLayout linear =
        nvmmaShared({c.rows, c.cols}, c.swizzle, 8 * c.elementBytes, {1, 0});
    NvmmaShared transposed{c.cols, c.rows, c.elementBytes, c.swizzle, true};
    LinearLayout columns =
        nvmmaShared({c.cols, c.rows}, c.swizzle, 8 * c.elementBytes, {0, 1});
    for (int64_t e = 0; e < c.rows * c.cols; ++e) {
      LinearLayout::Vector at = linear.apply({int32_t(e)});
      ASSERT_EQ(tile.offset(at[0], at[1]), e * c.elementBytes)
          << "swizzle " << c.swizzle << " element " << e;
      LinearLayout::Vector t = columns.apply({int32_t(e)});
      ASSERT_EQ(transposed.offset(t[0], t[1]), e * c.elementBytes);
    }
  }
}

} // namespace
} // namespace kiln::layout
