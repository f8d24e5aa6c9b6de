//===- SharedTileAddress.h - nvmma_shared addresses as LLVM values --------===//
//
// layout::NvmmaShared's offset, emitted for run-time coordinates: the
// lowerings of async copies and ldmatrix compute where a thread's chunk of
// a shared tile is.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_SHAREDTILEADDRESS_H
#define KILN_CONVERSION_SHAREDTILEADDRESS_H

#include "compiler/conversion/LoweringUtils.h"
#include "compiler/layout/NvmmaShared.h"

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

private:
  layout::NvmmaShared layout;
};

} // namespace kiln

#endif // KILN_CONVERSION_SHAREDTILEADDRESS_H
