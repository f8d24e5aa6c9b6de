//===- NvmmaShared.h - the swizzled shared tiles tensor cores read --------===//
//
// A row-major tile (the last dimension contiguous) in panels of `swizzle`
// bytes along its rows: panel p holds row r's bytes [p * swizzle, (p + 1) *
// swizzle) at p * rows * swizzle + r * swizzle. Then, as the hardware's
// 128/64/32-byte swizzle modes do, address bits 4.. (the 16-byte chunk) are
// XORed with bits 7.. (the row within an 8-row pattern): rows of one column
// of chunks land in different banks, and wgmma descriptors, ldmatrix and
// cp.async all see the same bytes. swizzle = 0: plain row-major. A
// `transposed` tile is the same with the roles of rows and columns swapped:
// its first dimension is contiguous (panels of columns).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_NVMMASHARED_H
#define KILN_LAYOUT_NVMMASHARED_H

#include <cstdint>

namespace kiln::layout {

struct NvmmaShared {
  int64_t rows = 0, cols = 0;
  unsigned elementBytes = 2;
  unsigned swizzle = 128;  // 0, 32, 64 or 128
  bool transposed = false; // dimension 0 contiguous

  /// The 16-byte chunk bits XORed by the swizzle (0, 1, 3 or 7).
  unsigned chunkMask() const { return swizzle ? swizzle / 16 - 1 : 0; }
  /// Lines (rows, or columns when transposed) and their length.
  int64_t lines() const { return transposed ? cols : rows; }
  int64_t lineLength() const { return transposed ? rows : cols; }
  /// Bytes between panels.
  int64_t panelStride() const { return lines() * int64_t(swizzle); }

  /// The byte offset of element (row, col), before the swizzle.
  int64_t linearOffset(int64_t row, int64_t col) const {
    int64_t line = transposed ? col : row, along = transposed ? row : col;
    int64_t byte = along * elementBytes;
    if (swizzle == 0)
      return line * lineLength() * elementBytes + byte;
    return (byte / swizzle) * panelStride() + line * swizzle + byte % swizzle;
  }
  /// The swizzle applied to a byte offset from a 1024-byte aligned base.
  int64_t swizzled(int64_t offset) const {
    return offset ^ (((offset >> 7) & chunkMask()) << 4);
  }
  /// Where element (row, col) is.
  int64_t offset(int64_t row, int64_t col) const {
    return swizzled(linearOffset(row, col));
  }
};

} // namespace kiln::layout

#endif // KILN_LAYOUT_NVMMASHARED_H
