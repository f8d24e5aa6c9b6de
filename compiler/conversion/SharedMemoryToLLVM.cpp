//===- SharedMemoryToLLVM.cpp - buffers, cp.async, waits and barriers -----===//
//
// A kiln_gpu.memdesc value is the shared address of its first byte. Buffers
// sit in the kernel's dynamic shared memory at the offset
// kiln-allocate-shared gave them; a tile of a ring is tileBytes further per
// index. Async copies write each thread's chunks of contiguous elements
// with one `cp.async` each, at the nvmma_shared address of the chunk
// (SharedTileAddress.h), zero-filling masked chunks (src-size 0).
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/conversion/SharedTileAddress.h"

using namespace mlir;
using kiln::i32Constant;

namespace {

struct LocalAllocLowering : OpConversionPattern<kiln::gpu::LocalAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::LocalAllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<uint64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError("has no offset: run kiln-allocate-shared first");
    Location loc = op.getLoc();
    Value base = kiln::sharedPoolBase(rewriter, loc);
    if (*offset != 0)
      base = LLVM::GEPOp::create(rewriter, loc, base.getType(),
                                 rewriter.getI8Type(), base,
                                 ArrayRef<LLVM::GEPArg>{int32_t(*offset)});
    rewriter.replaceOp(op, base);
    return success();
  }
};

struct MemDescIndexLowering : OpConversionPattern<kiln::gpu::MemDescIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::MemDescIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getType());
    Value bytes =
        LLVM::MulOp::create(rewriter, loc, adaptor.getIndex(),
                            i32Constant(rewriter, loc, tile.getSizeInBytes()));
    rewriter.replaceOp(
        op, LLVM::GEPOp::create(rewriter, loc, adaptor.getSrc().getType(),
                                rewriter.getI8Type(), adaptor.getSrc(),
                                ValueRange{bytes}));
    return success();
  }
};

/// A transposed view is the same bytes: the address passes through.
struct MemDescTransLowering : OpConversionPattern<kiln::gpu::MemDescTransOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::MemDescTransOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSrc());
    return success();
  }
};

struct AsyncCopyLowering : OpConversionPattern<kiln::gpu::AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getDst().getType());
    std::optional<kiln::layout::LinearLayout> layout =
        kiln::getLinearLayout(op.getPtrs().getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "pointers without a layout");
    unsigned elementBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    unsigned vec = 1;
    if (auto attr = op->getAttrOfType<IntegerAttr>("kiln_gpu.vec"))
      vec = unsigned(attr.getInt());
    kiln::SharedTileAddress address(tile);
    // Chunks run along the tile's contiguous dimension.
    unsigned dim = address.shape().transposed ? 0 : 1;
    vec = std::min(
        {vec, kiln::contiguousRegistersAlong(*layout, dim), 16 / elementBytes});
    unsigned bytes = vec * elementBytes;
    if (bytes < 4)
      return op.emitOpError("cp.async needs chunks of 4, 8 or 16 bytes; "
                            "these are ")
             << bytes;

    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtrs());
    SmallVector<Value> mask;
    if (adaptor.getMask())
      mask = kiln::unpackElements(rewriter, loc, adaptor.getMask());
    SmallVector<kiln::Coordinates> coords =
        kiln::emitCoordinates(rewriter, loc, *layout);
    Value base = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                          adaptor.getDst());
    // cg (L2 only) exists for 16-byte copies; smaller ones go through L1.
    std::string text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") +
                       ".shared.global [ $0 ], [ $1 ], " +
                       std::to_string(bytes) + ", $2;";
    Value full = i32Constant(rewriter, loc, bytes);
    Value none = i32Constant(rewriter, loc, 0);
    // One address per thread plus constants where the layout allows (the
    // usual case): no swizzle arithmetic per chunk.
    std::optional<SmallVector<int64_t>> constants =
        address.registerOffsets(*layout);
    Value threadBase =
        constants
            ? Value(LLVM::AddOp::create(
                  rewriter, loc, base,
                  address.emit(rewriter, loc, coords[0][0], coords[0][1])))
            : Value();
    for (unsigned r = 0; r < ptrs.size(); r += vec) {
      if (!kiln::isRepresentativeRegister(*layout, r))
        continue;
      Value dst =
          constants
              ? Value(LLVM::AddOp::create(
                    rewriter, loc, threadBase,
                    i32Constant(rewriter, loc, (*constants)[r])))
              : Value(LLVM::AddOp::create(
                    rewriter, loc, base,
                    address.emit(rewriter, loc, coords[r][0], coords[r][1])));
      Value size = mask.empty() ? full
                                : Value(LLVM::SelectOp::create(
                                      rewriter, loc, mask[r], full, none));
      kiln::inlinePtxEffect(rewriter, loc, Type(), text, "r,l,r",
                            ValueRange{dst, ptrs[r], size});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// Ops that become one side-effecting PTX instruction.
template <typename Op> struct FixedPtxLowering : OpConversionPattern<Op> {
  FixedPtxLowering(TypeConverter &converter, MLIRContext *ctx,
                   std::function<std::string(Op)> text)
      : OpConversionPattern<Op>(converter, ctx), text(std::move(text)) {}
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    kiln::inlinePtxEffect(rewriter, op.getLoc(), Type(), text(op), "",
                          ValueRange{});
    rewriter.eraseOp(op);
    return success();
  }
  std::function<std::string(Op)> text;
};

struct BarrierLowering : OpConversionPattern<kiln::gpu::BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::Barrier0Op::create(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kiln::populateSharedMemoryToLLVMPatterns(KilnTypeConverter &converter,
                                              RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LocalAllocLowering, MemDescIndexLowering, MemDescTransLowering,
               AsyncCopyLowering, BarrierLowering>(converter, ctx);
  patterns.add<FixedPtxLowering<kiln::gpu::AsyncCommitGroupOp>>(
      converter, ctx,
      [](kiln::gpu::AsyncCommitGroupOp) { return "cp.async.commit_group;"; });
  patterns.add<FixedPtxLowering<kiln::gpu::AsyncWaitOp>>(
      converter, ctx, [](kiln::gpu::AsyncWaitOp op) {
        return "cp.async.wait_group " + std::to_string(op.getPending()) + ";";
      });
  patterns.add<FixedPtxLowering<kiln::gpu::FenceAsyncSharedOp>>(
      converter, ctx, [](kiln::gpu::FenceAsyncSharedOp) {
        return "fence.proxy.async.shared::cta;";
      });
}
