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
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/APFloat.h"

namespace kiln {
#define GEN_PASS_DEF_KILNREWRITEBLOCKPOINTERS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The scalar parts of a block pointer, in the order the type converter
/// lists them: base, shape..., strides..., offsets....
struct BlockPointerParts {
  Value base;
  SmallVector<Value> shape, strides, offsets;

  static BlockPointerParts unpack(ValueRange flat) {
    size_t rank = (flat.size() - 1) / 3;
    BlockPointerParts parts;
    parts.base = flat[0];
    parts.shape.assign(flat.begin() + 1, flat.begin() + 1 + rank);
    parts.strides.assign(flat.begin() + 1 + rank, flat.begin() + 1 + 2 * rank);
    parts.offsets.assign(flat.begin() + 1 + 2 * rank, flat.end());
    return parts;
  }
  SmallVector<Value> pack() const {
    SmallVector<Value> flat{base};
    llvm::append_range(flat, shape);
    llvm::append_range(flat, strides);
    llvm::append_range(flat, offsets);
    return flat;
  }
};

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

/// Builds the index tensors, pointers and masks of one block access.
class BlockAccessBuilder {
public:
  BlockAccessBuilder(OpBuilder &b, Location loc, const BlockPointerParts &parts,
                     RankedTensorType block)
      : b(b), loc(loc), parts(parts), block(block),
        indicesByDim(block.getRank()) {}

  /// offset_d + arange(0, B_d) in i64, shaped [1, ..., B_d, ..., 1] so that
  /// it broadcasts along every other dimension.
  Value indicesAlong(unsigned d) {
    if (!indicesByDim[d])
      indicesByDim[d] = buildIndicesAlong(d);
    return indicesByDim[d];
  }

  /// The tensor of pointers base + sum_d indices_d * stride_d.
  Value pointers() {
    Value sum;
    for (unsigned d = 0; d < block.getRank(); ++d) {
      Value indices = indicesAlong(d);
      Value stride =
          kiln::SplatOp::create(b, loc, indices.getType(), parts.strides[d]);
      Value term = broadcast(arith::MulIOp::create(b, loc, indices, stride));
      sum = sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
    }
    auto ptrType =
        RankedTensorType::get(block.getShape(), parts.base.getType());
    Value base = kiln::SplatOp::create(b, loc, ptrType, parts.base);
    return kiln::AddPtrOp::create(b, loc, ptrType, base, sum);
  }

  /// The AND over `dims` of 0 <= indices_d < shape_d; null when `dims` is
  /// empty (nothing to check).
  Value inBounds(ArrayRef<int32_t> dims) {
    Value mask;
    for (int32_t d : dims) {
      Value indices = indicesAlong(d);
      auto type = cast<RankedTensorType>(indices.getType());
      Value zero = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(0)));
      Value bound = kiln::SplatOp::create(b, loc, type, parts.shape[d]);
      // One statement per op: argument evaluation order is unspecified, and
      // the IR must not depend on the compiler kilnc was built with.
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          indices, bound);
      Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          indices, zero);
      Value inside = arith::AndIOp::create(b, loc, above, below);
      inside = broadcast(inside);
      mask = mask ? arith::AndIOp::create(b, loc, mask, inside).getResult()
                  : inside;
    }
    return mask;
  }

  /// The value out-of-bounds elements read as under `padding`.
  Value padValue(kiln::PaddingOption padding) {
    Type element = block.getElementType();
    TypedAttr value;
    if (auto f = dyn_cast<FloatType>(element))
      value = b.getFloatAttr(f, padding == kiln::PaddingOption::NaN
                                    ? APFloat::getNaN(f.getFloatSemantics())
                                    : APFloat::getZero(f.getFloatSemantics()));
    else
      value = b.getIntegerAttr(element, 0);
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(block, value));
  }

private:
  Value buildIndicesAlong(unsigned d) {
    int64_t size = block.getDimSize(d);
    Type i64 = b.getI64Type();
    auto rangeType = RankedTensorType::get({size}, b.getI32Type());
    auto indexType = RankedTensorType::get({size}, i64);
    Value range =
        kiln::MakeRangeOp::create(b, loc, rangeType, 0, int32_t(size));
    Value offset = arith::ExtSIOp::create(b, loc, i64, parts.offsets[d]);
    // One statement per op (see inBounds()).
    Value widened = arith::ExtSIOp::create(b, loc, indexType, range);
    Value start = kiln::SplatOp::create(b, loc, indexType, offset);
    Value result = arith::AddIOp::create(b, loc, start, widened);
    for (unsigned axis = 0; axis < block.getRank(); ++axis) {
      if (axis == d)
        continue;
      auto shape =
          llvm::to_vector(cast<RankedTensorType>(result.getType()).getShape());
      shape.insert(shape.begin() + axis, 1);
      result = kiln::ExpandDimsOp::create(
          b, loc, RankedTensorType::get(shape, i64), result, axis);
    }
    return result;
  }

  /// `v` broadcast from its [1, .., B_d, .., 1] shape to the block's.
  Value broadcast(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getShape() == block.getShape())
      return v;
    return kiln::BroadcastOp::create(
        b, loc, RankedTensorType::get(block.getShape(), type.getElementType()),
        v);
  }

  OpBuilder &b;
  Location loc;
  const BlockPointerParts &parts;
  RankedTensorType block;
  SmallVector<Value> indicesByDim; // built on first use
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
    rewriter.replaceOpWithMultiple(op, {parts.pack()});
    return success();
  }
};

struct AdvanceToOffsets : public OpConversionPattern<kiln::AdvanceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::AdvanceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    BlockPointerParts parts = BlockPointerParts::unpack(adaptor.getPtr());
    // Offsets advanced by zero stay the same value, so that loops see them
    // unchanged and stop carrying them.
    for (auto [offset, delta] : llvm::zip(parts.offsets, adaptor.getOffsets()))
      if (!matchPattern(delta.front(), m_Zero()))
        offset =
            arith::AddIOp::create(rewriter, op.getLoc(), offset, delta.front());
    rewriter.replaceOpWithMultiple(op, {parts.pack()});
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
    BlockPointerParts parts = BlockPointerParts::unpack(adaptor.getPtr());
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
    BlockPointerParts parts = BlockPointerParts::unpack(adaptor.getPtr());
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
