//===- LayoutToLLVM.cpp - ops that create tensors or move their elements --===//
//
// make_range and splat create a thread's elements from its coordinates;
// expand_dims, broadcast and trans only rename registers when the layouts
// assigned to their operand and result agree on lanes and warps (the layout
// pass arranges that); convert_layout moves elements between threads, through
// shared memory when they do not.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using kiln::layout::LinearLayout;

namespace {

Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(int32_t(v)));
}

struct MakeRangeLowering : OpConversionPattern<kiln::MakeRangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::MakeRangeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<LinearLayout> layout = kiln::getLinearLayout(op.getType());
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!layout || !resultType)
      return rewriter.notifyMatchFailure(op, "range without a layout");
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (kiln::Coordinates &coords :
         kiln::emitCoordinates(rewriter, loc, *layout))
      elements.push_back(
          op.getStart() == 0
              ? coords[0]
              : LLVM::AddOp::create(rewriter, loc, coords[0],
                                    i32Constant(rewriter, loc, op.getStart())));
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, elements));
    return success();
  }
};

struct SplatLowering : OpConversionPattern<kiln::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type resultType = getTypeConverter()->convertType(op.getType());
    unsigned n = kiln::elementsPerThread(op.getType());
    if (!resultType || n == 0)
      return rewriter.notifyMatchFailure(op, "splat without a layout");
    SmallVector<Value> elements(n, adaptor.getSrc());
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, op.getLoc(), resultType, elements));
    return success();
  }
};

/// Rewrites `op` (one tensor operand, one tensor result) as a renaming of
/// registers, with `project` mapping result coordinates to operand ones.
LogicalResult renameRegisters(Operation *op, Value convertedSrc,
                              const TypeConverter &converter,
                              ConversionPatternRewriter &rewriter,
                              kiln::CoordinateMap project) {
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::optional<LinearLayout> from = kiln::getLinearLayout(srcType);
  std::optional<LinearLayout> to = kiln::getLinearLayout(resultType);
  Type converted = converter.convertType(resultType);
  if (!from || !to || !converted)
    return rewriter.notifyMatchFailure(op, "tensors without layouts");
  std::optional<SmallVector<unsigned>> mapping =
      kiln::registerMapping(*from, *to, project);
  if (!mapping)
    return op->emitError("the layouts of operand and result (")
           << srcType << " -> " << resultType
           << ") move data between threads; kiln-assign-layouts should have "
              "made them agree";
  Location loc = op->getLoc();
  SmallVector<Value> src = kiln::unpackElements(rewriter, loc, convertedSrc);
  SmallVector<Value> elements;
  for (unsigned k : *mapping)
    elements.push_back(src[k]);
  rewriter.replaceOp(op,
                     kiln::packElements(rewriter, loc, converted, elements));
  return success();
}

struct ExpandDimsLowering : OpConversionPattern<kiln::ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned axis = op.getAxis();
    return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(), rewriter,
                           [axis](ArrayRef<int32_t> coords) {
                             SmallVector<int32_t> projected(coords);
                             projected.erase(projected.begin() + axis);
                             return projected;
                           });
  }
};

struct BroadcastLowering : OpConversionPattern<kiln::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> srcShape = op.getSrc().getType().getShape();
    return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(), rewriter,
                           [srcShape](ArrayRef<int32_t> coords) {
                             SmallVector<int32_t> projected(coords);
                             for (auto [c, size] :
                                  llvm::zip_equal(projected, srcShape))
                               if (size == 1)
                                 c = 0;
                             return projected;
                           });
  }
};

struct TransLowering : OpConversionPattern<kiln::TransOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::TransOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int32_t> order = op.getOrder();
    // Result dimension i is operand dimension order[i].
    return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(), rewriter,
                           [order](ArrayRef<int32_t> coords) {
                             SmallVector<int32_t> projected(coords.size());
                             for (auto [i, d] : llvm::enumerate(order))
                               projected[d] = coords[i];
                             return projected;
                           });
  }
};

/// Converts through shared memory unless only registers need renaming: every
/// thread writes its elements at their row-major offsets, then reads the
/// ones the result layout gives it.
struct ConvertLayoutLowering : OpConversionPattern<kiln::gpu::ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType srcType = op.getSrc().getType();
    RankedTensorType resultType = op.getResult().getType();
    std::optional<LinearLayout> from = kiln::getLinearLayout(srcType);
    std::optional<LinearLayout> to = kiln::getLinearLayout(resultType);
    Type converted = getTypeConverter()->convertType(resultType);
    if (!from || !to || !converted)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    Location loc = op.getLoc();
    SmallVector<Value> src =
        kiln::unpackElements(rewriter, loc, adaptor.getSrc());
    auto same = [](ArrayRef<int32_t> c) { return SmallVector<int32_t>(c); };
    if (auto mapping = kiln::registerMapping(*from, *to, same)) {
      SmallVector<Value> elements;
      for (unsigned k : *mapping)
        elements.push_back(src[k]);
      rewriter.replaceOp(
          op, kiln::packElements(rewriter, loc, converted, elements));
      return success();
    }

    // Booleans travel as bytes.
    Type elementType = src.front().getType();
    Type storedType = elementType;
    if (elementType.isInteger(1))
      storedType = rewriter.getI8Type();
    ArrayRef<int64_t> shape = srcType.getShape();
    Value base = kiln::allocateSharedArray(rewriter, op, storedType,
                                           srcType.getNumElements());
    auto sharedPtr = base.getType();
    auto offsetOf = [&](const kiln::Coordinates &coords) {
      Value offset;
      int64_t stride = 1;
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        Value term = coords[d];
        if (stride > 1)
          term = LLVM::MulOp::create(rewriter, loc, term,
                                     i32Constant(rewriter, loc, stride));
        offset = offset
                     ? Value(LLVM::AddOp::create(rewriter, loc, offset, term))
                     : term;
        stride *= shape[d];
      }
      return LLVM::GEPOp::create(rewriter, loc, sharedPtr, storedType, base,
                                 ValueRange{offset});
    };
    SmallVector<kiln::Coordinates> srcCoords =
        kiln::emitCoordinates(rewriter, loc, *from);
    for (auto [k, value] : llvm::enumerate(src)) {
      if (!kiln::isRepresentativeRegister(*from, unsigned(k)))
        continue; // a copy of an element written already
      Value stored = value;
      if (storedType != elementType)
        stored = LLVM::ZExtOp::create(rewriter, loc, storedType, value);
      LLVM::StoreOp::create(rewriter, loc, stored, offsetOf(srcCoords[k]));
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    SmallVector<Value> elements;
    for (const kiln::Coordinates &coords :
         kiln::emitCoordinates(rewriter, loc, *to)) {
      Value loaded =
          LLVM::LoadOp::create(rewriter, loc, storedType, offsetOf(coords));
      if (storedType != elementType)
        loaded = LLVM::TruncOp::create(rewriter, loc, elementType, loaded);
      elements.push_back(loaded);
    }
    // The array is written again if this runs in a loop.
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, converted, elements));
    return success();
  }
};

} // namespace

void kiln::populateLayoutToLLVMPatterns(KilnTypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<MakeRangeLowering, SplatLowering, ExpandDimsLowering,
               BroadcastLowering, TransLowering, ConvertLayoutLowering>(
      converter, patterns.getContext());
}
