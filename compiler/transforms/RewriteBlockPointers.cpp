//===- RewriteBlockPointers.cpp - block pointers as tensors of pointers ---===//
//
// A block pointer (tl.make_block_ptr) is only a tuple of scalars: the base
// pointer, the tensor's shape and strides (i64) and the block's offsets (i32).
// This pass replaces every block-pointer value by those parts, so that the
// rest of the compiler never sees one:
//
// - kiln.make_block_ptr disappears, kiln.advance becomes additions to the
//   offsets;
// - a load or store through a block pointer becomes an ordinary one on the
//   tensor of pointers base + sum_d (offset_d + arange(0, B_d)) * stride_d,
//   computed in i64, masked by 0 <= offset_d + i_d < shape_d over the
//   boundary_check dimensions; a load's out-of-bounds elements read as zero
//   or NaN for padding "zero" or "nan", and are left undefined without one,
//   as in upstream Triton;
// - scf.for, scf.while and scf.if that carry block pointers carry their parts
//   instead (a one-to-many type conversion), and scf's canonicalization then
//   drops the parts that do not change, usually all but the offsets.
//
// The index arithmetic is the same shape of code a kernel writes by hand
// (`offs_m[:, None] * stride_m + offs_n[None, :]`), so axis info proves the
// dimension of stride 1 contiguous and its accesses vectorize.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/BlockAccess.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNREWRITEBLOCKPOINTERS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::BlockAccessBuilder;
using kiln::BlockPointerParts;

namespace {

/// A block pointer's parts, in the order the type converter lists them:
/// base, shape..., strides..., offsets....
BlockPointerParts unpackParts(ValueRange flat) {
  size_t rank = (flat.size() - 1) / 3;
  BlockPointerParts parts;
  parts.base = flat[0];
  parts.shape.assign(flat.begin() + 1, flat.begin() + 1 + rank);
  parts.strides.assign(flat.begin() + 1 + rank, flat.begin() + 1 + 2 * rank);
  parts.offsets.assign(flat.begin() + 1 + 2 * rank, flat.end());
  return parts;
}

SmallVector<Value> packParts(const BlockPointerParts &parts) {
  SmallVector<Value> flat{parts.base};
  llvm::append_range(flat, parts.shape);
  llvm::append_range(flat, parts.strides);
  llvm::append_range(flat, parts.offsets);
  return flat;
}

/// Block pointers become their parts; every other type stays.
class BlockPointerTypeConverter : public TypeConverter {
public:
  BlockPointerTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](kiln::BlockPointerType type,
                     SmallVectorImpl<Type> &parts) -> LogicalResult {
      RankedTensorType block = type.getTensorType();
      MLIRContext *ctx = type.getContext();
      parts.push_back(kiln::PointerType::get(block.getElementType()));
      parts.append(2 * block.getRank(), IntegerType::get(ctx, 64));
      parts.append(block.getRank(), IntegerType::get(ctx, 32));
      return success();
    });
  }
};

struct MakeBlockPtrToParts : public OpConversionPattern<kiln::MakeBlockPtrOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::MakeBlockPtrOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockPointerParts parts;
    parts.base = adaptor.getBase().front();
    for (ValueRange v : adaptor.getShape())
      parts.shape.push_back(v.front());
    for (ValueRange v : adaptor.getStrides())
      parts.strides.push_back(v.front());
    for (ValueRange v : adaptor.getOffsets())
      parts.offsets.push_back(v.front());
    rewriter.replaceOpWithMultiple(op, {packParts(parts)});
    return success();
  }
};

struct AdvanceToOffsets : public OpConversionPattern<kiln::AdvanceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::AdvanceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockPointerParts parts = unpackParts(adaptor.getPtr());
    // Offsets advanced by zero stay the same value, so that loops see them
    // unchanged and stop carrying them.
    for (auto [offset, delta] : llvm::zip(parts.offsets, adaptor.getOffsets()))
      if (!matchPattern(delta.front(), m_Zero()))
        offset =
            arith::AddIOp::create(rewriter, op.getLoc(), offset, delta.front());
    rewriter.replaceOpWithMultiple(op, {packParts(parts)});
    return success();
  }
};

struct BlockLoadToLoad : public OpConversionPattern<kiln::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::LoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<kiln::BlockPointerType>(op.getPtr().getType());
    if (!type)
      return failure();
    BlockPointerParts parts = unpackParts(adaptor.getPtr());
    BlockAccessBuilder access(rewriter, op.getLoc(), parts,
                              type.getTensorType());
    Value ptrs = access.pointers();
    Value mask =
        access.inBounds(op.getBoundaryCheck().value_or(ArrayRef<int32_t>()));
    Value other;
    if (mask && op.getPadding())
      other = access.padValue(*op.getPadding());
    rewriter.replaceOpWithNewOp<kiln::LoadOp>(
        op, op.getType(), ptrs, mask, other, DenseI32ArrayAttr(),
        kiln::PaddingOptionAttr(), op.getCache(), op.getEvict(),
        op.getIsVolatile());
    return success();
  }
};

struct BlockStoreToStore : public OpConversionPattern<kiln::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::StoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<kiln::BlockPointerType>(op.getPtr().getType());
    if (!type)
      return failure();
    BlockPointerParts parts = unpackParts(adaptor.getPtr());
    BlockAccessBuilder access(rewriter, op.getLoc(), parts,
                              type.getTensorType());
    Value ptrs = access.pointers();
    Value mask =
        access.inBounds(op.getBoundaryCheck().value_or(ArrayRef<int32_t>()));
    rewriter.replaceOpWithNewOp<kiln::StoreOp>(
        op, ptrs, adaptor.getValue().front(), mask, DenseI32ArrayAttr(),
        op.getCache(), op.getEvict());
    return success();
  }
};

bool isBlockPointer(Type type) { return isa<kiln::BlockPointerType>(type); }

bool isBlockAccess(Operation *op) {
  return isBlockPointer(op->getOperand(0).getType());
}

struct RewriteBlockPointersPass
    : public kiln::impl::KilnRewriteBlockPointersBase<
          RewriteBlockPointersPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    BlockPointerTypeConverter converter;
    ConversionTarget target(*ctx);
    target.addIllegalOp<kiln::MakeBlockPtrOp, kiln::AdvanceOp>();
    target.addDynamicallyLegalOp<kiln::LoadOp, kiln::StoreOp>(
        [](Operation *op) { return !isBlockAccess(op); });
    // Any other op that takes or gives a block pointer is an error.
    target.markUnknownOpDynamicallyLegal([](Operation *op) {
      return llvm::none_of(op->getOperandTypes(), isBlockPointer) &&
             llvm::none_of(op->getResultTypes(), isBlockPointer);
    });
    RewritePatternSet patterns(ctx);
    patterns.add<MakeBlockPtrToParts, AdvanceToOffsets, BlockLoadToLoad,
                 BlockStoreToStore>(converter, ctx);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();

    // Loops and ifs carry every part now; keep only those that change.
    SmallVector<Operation *> carriers;
    getOperation()->walk([&](Operation *op) {
      if (isa<scf::ForOp, scf::WhileOp, scf::IfOp>(op))
        carriers.push_back(op);
    });
    RewritePatternSet cleanup(ctx);
    scf::ForOp::getCanonicalizationPatterns(cleanup, ctx);
    scf::WhileOp::getCanonicalizationPatterns(cleanup, ctx);
    scf::IfOp::getCanonicalizationPatterns(cleanup, ctx);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(carriers, std::move(cleanup), config);
  }
};

} // namespace
