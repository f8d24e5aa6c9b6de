//===- SharedTileAddress.h - nvmma_shared addresses as LLVM values --------===//
//
// layout::NvmmaShared's offset, emitted for run-time coordinates: the
// lowerings of async copies and ldmatrix compute where a thread's chunk of
// a shared tile is.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_SHAREDTILEADDRESS_H
#define KILN_CONVERSION_SHAREDTILEADDRESS_H

#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/layout/NvmmaShared.h"

#include <optional>

namespace kiln {

class SharedTileAddress {
public:
  explicit SharedTileAddress(gpu::MemDescType tile) {
    llvm::ArrayRef<int64_t> shape = tile.getShape();
    layout.rows = shape[shape.size() - 2];
    layout.cols = shape.back();
    layout.elementBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    auto encoding =
        llvm::cast<gpu::NVMMASharedEncodingAttr>(tile.getEncoding());
    layout.swizzle = encoding.getSwizzle();
    layout.transposed = encoding.getTransposed();
  }

  const layout::NvmmaShared &shape() const { return layout; }

  /// The byte offset of element (row, col) in the tile (i32 values).
  mlir::Value emit(mlir::OpBuilder &b, mlir::Location loc, mlir::Value row,
                   mlir::Value col) const {
    using namespace mlir;
    auto c = [&](int64_t v) { return i32Constant(b, loc, v); };
    if (layout.transposed)
      std::swap(row, col); // row: the line, col: along it
    Value byte = LLVM::MulOp::create(b, loc, col, c(layout.elementBytes));
    if (layout.swizzle == 0)
      return LLVM::AddOp::create(
          b, loc,
          LLVM::MulOp::create(b, loc, row,
                              c(layout.lineLength() * layout.elementBytes)),
          byte);
    unsigned shift = llvm::Log2_32(layout.swizzle);
    Value panel = LLVM::LShrOp::create(b, loc, byte, c(shift));
    Value inPanel = LLVM::AndOp::create(b, loc, byte, c(layout.swizzle - 1));
    Value offset = LLVM::AddOp::create(
        b, loc,
        LLVM::AddOp::create(
            b, loc, LLVM::MulOp::create(b, loc, panel, c(layout.panelStride())),
            LLVM::MulOp::create(b, loc, row, c(layout.swizzle))),
        inPanel);
    Value bits = LLVM::ShlOp::create(
        b, loc,
        LLVM::AndOp::create(b, loc, LLVM::LShrOp::create(b, loc, offset, c(7)),
                            c(layout.chunkMask())),
        c(4));
    return LLVM::XOrOp::create(b, loc, offset, bits);
  }

  /// The constant by which the offset of every element moves when its
  /// line coordinate moves by `lines` within the tile: each swizzle repeats
  /// every 8 lines, so whole periods add whole panels' rows. std::nullopt
  /// for other moves of a swizzled tile.
  std::optional<int64_t> lineShift(int64_t lines) const {
    if (layout.swizzle == 0)
      return lines * layout.lineLength() * layout.elementBytes;
    if (lines % 8 != 0 || layout.lines() % 8 != 0)
      return std::nullopt;
    return lines * int64_t(layout.swizzle);
  }

  /// When the offset of every register of `tensorLayout` (a distributed
  /// layout of the tile's shape) is this thread's offset of register 0 plus
  /// a constant, those constants, by register: the register bits and the
  /// lane/warp bits of the (XOR-linear) offset are disjoint, so XOR is
  /// addition. A copy then computes one address per thread and adds
  /// immediates, as ptxas folds them into the instruction. std::nullopt
  /// otherwise.
  std::optional<llvm::SmallVector<int64_t>>
  registerOffsets(const layout::LinearLayout &tensorLayout) const {
    int64_t threadBits = 0, registerBits = 0;
    llvm::SmallVector<int64_t> registerBases;
    for (llvm::StringRef dim : tensorLayout.getInDimNames())
      for (int32_t bit = 0; bit < tensorLayout.getInDimSizeLog2(dim); ++bit) {
        int64_t offset = basisOffset(tensorLayout, dim, bit);
        if (offset < 0)
          return std::nullopt;
        if (dim == layout::kRegister) {
          registerBits |= offset;
          registerBases.push_back(offset);
        } else {
          threadBits |= offset;
        }
      }
    if (registerBits & threadBits)
      return std::nullopt;
    std::optional<llvm::SmallVector<int64_t>> offsets =
        offsetsByRegister(tensorLayout);
    if (!offsets)
      return std::nullopt;
    for (auto [r, offset] : llvm::enumerate(*offsets)) {
      int64_t linear = 0;
      for (auto [bit, base] : llvm::enumerate(registerBases))
        if ((r >> bit) & 1)
          linear ^= base;
      // The offset must be linear in the coordinates (power-of-two tiles).
      if (offset != linear)
        return std::nullopt;
    }
    return offsets;
  }

  /// The offset of every register of `tensorLayout` as this thread's
  /// offset of register 0 XOR a constant, by register: the offset is linear
  /// over XOR in the coordinates of a tile whose dimensions are powers of
  /// two, whatever bits the registers and threads share. std::nullopt for
  /// other tiles.
  std::optional<llvm::SmallVector<int64_t>>
  registerXors(const layout::LinearLayout &tensorLayout) const {
    if (!llvm::isPowerOf2_64(uint64_t(layout.rows)) ||
        !llvm::isPowerOf2_64(uint64_t(layout.cols)))
      return std::nullopt;
    return offsetsByRegister(tensorLayout);
  }

  /// The bits a thread's offset of register 0 may have set where the
  /// offset is linear over XOR (registerXors): those of its lane, warp and
  /// block bases' offsets (xorOutsideBits' `vBits`).
  uint64_t threadBits(const layout::LinearLayout &tensorLayout) const {
    uint64_t bits = 0;
    for (llvm::StringRef dim : tensorLayout.getInDimNames()) {
      if (dim == layout::kRegister)
        continue;
      for (int32_t bit = 0; bit < tensorLayout.getInDimSizeLog2(dim); ++bit)
        bits |= uint64_t(basisOffset(tensorLayout, dim, bit));
    }
    return bits;
  }

  /// The byte offset, under `tensorLayout`, of the basis `bit` of
  /// hardware dimension `dim`; -1 for fewer than two coordinates.
  int64_t basisOffset(const layout::LinearLayout &tensorLayout,
                      llvm::StringRef dim, int32_t bit) const {
    return offsetOf(tensorLayout.getBasis(dim, bit));
  }

private:
  /// The byte offset of the element at `coords` (its last two); -1 for
  /// fewer than two.
  int64_t offsetOf(llvm::ArrayRef<int32_t> coords) const {
    size_t n = coords.size();
    return n < 2 ? -1 : layout.offset(coords[n - 2], coords[n - 1]);
  }

  /// The offset of each register of `tensorLayout` (lane, warp and block
  /// 0); std::nullopt where a register has fewer than two coordinates.
  std::optional<llvm::SmallVector<int64_t>>
  offsetsByRegister(const layout::LinearLayout &tensorLayout) const {
    llvm::SmallVector<int64_t> offsets;
    int32_t registers = tensorLayout.getInDimSize(layout::kRegister);
    for (int32_t r = 0; r < registers; ++r) {
      int64_t offset = offsetOf(registerCoordinates(tensorLayout, unsigned(r)));
      if (offset < 0)
        return std::nullopt;
      offsets.push_back(offset);
    }
    return offsets;
  }

  layout::NvmmaShared layout;
};

} // namespace kiln

#endif // KILN_CONVERSION_SHAREDTILEADDRESS_H
