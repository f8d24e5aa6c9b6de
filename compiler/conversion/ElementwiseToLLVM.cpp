//===- ElementwiseToLLVM.cpp - per-element lowering of tensor ops ---------===//
//
// Ops that act on each element independently (arith, math, splat, addptr)
// become the same scalar op on each element the thread holds; the index ops
// (program_id, make_range) read the thread and block registers.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/conversion/SharedBarriers.h"
#include "compiler/ir/ElementTypes.h"
#include "compiler/layout/EqualRuns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// Any arith/math op on tensors: the scalar op once per element.
struct ElementwiseOpLowering : ConversionPattern {
  ElementwiseOpLowering(TypeConverter &converter,
                        const kiln::Constancies &constancies,
                        MLIRContext *context)
      // Ahead of arith/math's own patterns, which would build ops on structs.
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/10,
                          context),
        constancies(constancies) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        isa<arith::ConstantOp>(op) || op->getNumResults() != 1)
      return failure();
    auto tensorType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!tensorType)
      return failure();
    Type resultType = getTypeConverter()->convertType(tensorType);
    if (!resultType)
      return rewriter.notifyMatchFailure(op, "tensor without a layout");
    Location loc = op->getLoc();
    SmallVector<SmallVector<Value>> elements;
    for (Value operand : operands)
      elements.push_back(kiln::unpackElements(rewriter, loc, operand));
    // The result's elements; a scalar operand (arith.select's condition on
    // tensors, as kiln-flatten-loops builds it) serves every one of them.
    size_t n = 0;
    for (auto &operandElements : elements)
      n = std::max(n, operandElements.size());
    // Registers in runs of equal results: compute one of each run.
    SmallVector<unsigned> representative;
    if (auto it = constancies.find(op); it != constancies.end())
      if (std::optional<kiln::layout::LinearLayout> layout =
              kiln::getLinearLayout(tensorType))
        representative =
            kiln::layout::registersOfEqualRuns(*layout, it->second);
    // Pointer elements in their LLVM type (arith.select on pointer tensors:
    // a flattened loop's per-tile pointers); the others stay as they are,
    // for the scalar patterns (fp8 casts among them) to lower.
    Type elementType = tensorType.getElementType();
    if (isa<kiln::PointerType>(elementType))
      elementType = getTypeConverter()->convertType(elementType);
    if (!elementType)
      return rewriter.notifyMatchFailure(op, "element type not convertible");
    SmallVector<Value> results;
    for (size_t k = 0; k < n; ++k) {
      if (k < representative.size() && representative[k] != k) {
        results.push_back(results[representative[k]]);
        continue;
      }
      OperationState state(loc, op->getName());
      for (auto &operandElements : elements)
        state.addOperands(operandElements.size() == 1 ? operandElements[0]
                                                      : operandElements[k]);
      state.addTypes(elementType);
      state.addAttributes(op->getAttrs());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, results));
    return success();
  }

  const kiln::Constancies &constancies;
};

/// Dense splat constants: one scalar constant, repeated.
struct TensorConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tensorType = dyn_cast<RankedTensorType>(op.getType());
    if (!tensorType)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return rewriter.notifyMatchFailure(op, "only splat tensor constants");
    Type resultType = getTypeConverter()->convertType(tensorType);
    if (!resultType)
      return failure();
    auto splat = cast<TypedAttr>(dense.getSplatValue<Attribute>());
    // fp8 values are bytes to LLVM: the constant is its bit pattern.
    if (auto fp8 = dyn_cast<FloatAttr>(splat);
        fp8 && kiln::isFp8(fp8.getType()))
      splat = rewriter.getIntegerAttr(rewriter.getI8Type(),
                                      fp8.getValue().bitcastToAPInt());
    Value scalar = arith::ConstantOp::create(rewriter, op.getLoc(), splat);
    unsigned n = kiln::elementsPerThread(tensorType);
    rewriter.replaceOp(op, kiln::packElements(rewriter, op.getLoc(), resultType,
                                              SmallVector<Value>(n, scalar)));
    return success();
  }
};

template <typename SourceOp, typename XOp, typename YOp, typename ZOp>
struct GridRegisterLowering : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Location loc = op.getLoc();
    Value v;
    switch (op.getAxis()) {
    case 0:
      v = XOp::create(rewriter, loc, i32);
      break;
    case 1:
      v = YOp::create(rewriter, loc, i32);
      break;
    default:
      v = ZOp::create(rewriter, loc, i32);
      break;
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};

struct AddPtrLowering : OpConversionPattern<kiln::AddPtrOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::AddPtrOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type resultType = getTypeConverter()->convertType(op.getType());
    auto pointer =
        cast<kiln::PointerType>(kiln::getElementTypeOrSelf(op.getType()));
    Type elementType =
        getTypeConverter()->convertType(pointer.getPointeeType());
    if (!resultType || !elementType)
      return failure();
    auto ptrType = LLVM::LLVMPointerType::get(getContext(), 1);
    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> offsets =
        kiln::unpackElements(rewriter, loc, adaptor.getOffset());
    SmallVector<Value> results;
    for (auto [ptr, offset] : llvm::zip_equal(ptrs, offsets))
      results.push_back(LLVM::GEPOp::create(rewriter, loc, ptrType, elementType,
                                            ptr, ValueRange{offset}));
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, results));
    return success();
  }
};

/// kiln.int_to_ptr / kiln.ptr_to_int (`tl.load(p).to(tl.pointer_type(T))`,
/// pointer bitcasts): LLVM's inttoptr / ptrtoint per element, on global
/// (address space 1) pointers.
template <typename KilnOp, typename LLVMOp>
struct AddressCastLowering : OpConversionPattern<KilnOp> {
  using OpConversionPattern<KilnOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KilnOp op, typename KilnOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    Type elementType = this->getTypeConverter()->convertType(
        kiln::getElementTypeOrSelf(op.getType()));
    if (!resultType || !elementType)
      return failure();
    SmallVector<Value> results;
    for (Value v : kiln::unpackElements(rewriter, loc, adaptor.getSrc()))
      results.push_back(LLVMOp::create(rewriter, loc, elementType, v));
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, results));
    return success();
  }
};

/// kiln.barrier: bar.sync 0 across the program's threads.
struct BarrierLowering : OpConversionPattern<kiln::BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto barrier = NVVM::Barrier0Op::create(rewriter, op.getLoc());
    // The source asked for it: kiln-remove-redundant-barriers keeps it.
    barrier->setAttr(kiln::kUserBarrierAttr, rewriter.getUnitAttr());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kiln::populateElementwiseToLLVMPatterns(KilnTypeConverter &converter,
                                             const Constancies &constancies,
                                             RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseOpLowering>(converter, constancies, ctx);
  // Before arith's own constant lowering, which knows no layouts.
  patterns.add<TensorConstantLowering>(converter, ctx, /*benefit=*/2);
  patterns.add<AddPtrLowering, BarrierLowering>(converter, ctx);
  patterns.add<AddressCastLowering<kiln::IntToPtrOp, LLVM::IntToPtrOp>,
               AddressCastLowering<kiln::PtrToIntOp, LLVM::PtrToIntOp>>(
      converter, ctx);
  patterns.add<GridRegisterLowering<kiln::ProgramIdOp, NVVM::BlockIdXOp,
                                    NVVM::BlockIdYOp, NVVM::BlockIdZOp>,
               GridRegisterLowering<kiln::NumProgramsOp, NVVM::GridDimXOp,
                                    NVVM::GridDimYOp, NVVM::GridDimZOp>>(
      converter, ctx);
}
