//===- CatToLLVM.cpp - concatenation of 1-D blocked tensors ---------------===//
//
// tl.cat leaves the order of the result's elements unspecified. When every
// thread holds distinct operand elements and the result gives each thread
// room for both operands' elements, the thread's elements are simply put
// side by side: a permutation of the concatenation, with no data movement.
// Otherwise (operands smaller than the CTA, whose threads hold copies) the
// operands go through shared memory in order and each thread reads its
// elements of the result back.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace {

struct CatLowering : OpConversionPattern<kiln::CatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::CatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto operandType = cast<RankedTensorType>(op.getLhs().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    auto from = kiln::BlockedLayout1D::get(operandType);
    auto to = kiln::BlockedLayout1D::get(resultType);
    Type converted = getTypeConverter()->convertType(resultType);
    if (!from || !to || !converted)
      return rewriter.notifyMatchFailure(op, "only 1-D blocked tensors");
    Location loc = op.getLoc();
    SmallVector<Value> lhs = kiln::unpackElements(rewriter, loc, adaptor.getLhs());
    SmallVector<Value> rhs = kiln::unpackElements(rewriter, loc, adaptor.getRhs());

    bool distinct = from->tileSize() <= from->size;
    if (distinct && to->elementsPerThread() == lhs.size() + rhs.size()) {
      SmallVector<Value> elements(lhs);
      llvm::append_range(elements, rhs);
      rewriter.replaceOp(op, kiln::packElements(rewriter, loc, converted, elements));
      return success();
    }

    // Through shared memory, in order: lhs at [0, n), rhs at [n, 2n).
    Type elementType = lhs.front().getType();
    Value base =
        kiln::allocateSharedArray(rewriter, op, elementType, to->size);
    auto sharedPtr = LLVM::LLVMPointerType::get(getContext(), 3);
    Value tid = kiln::threadIdX(rewriter, loc);
    auto slot = [&](Value index) {
      return LLVM::GEPOp::create(rewriter, loc, sharedPtr, elementType, base,
                                 ValueRange{index});
    };
    Value rhsOffset = LLVM::ConstantOp::create(
        rewriter, loc, rewriter.getI32Type(),
        rewriter.getI32IntegerAttr(int32_t(from->size)));
    // Copies store the same value at the same place.
    for (unsigned k = 0; k < lhs.size(); ++k) {
      Value index = from->elementIndex(rewriter, loc, tid, k);
      LLVM::StoreOp::create(rewriter, loc, lhs[k], slot(index));
      LLVM::StoreOp::create(rewriter, loc, rhs[k],
                            slot(LLVM::AddOp::create(rewriter, loc, index, rhsOffset)));
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    SmallVector<Value> elements;
    for (unsigned k = 0; k < to->elementsPerThread(); ++k)
      elements.push_back(LLVM::LoadOp::create(
          rewriter, loc, elementType, slot(to->elementIndex(rewriter, loc, tid, k))));
    // The array may be written again (a cat in a loop).
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op, kiln::packElements(rewriter, loc, converted, elements));
    return success();
  }
};

} // namespace

void kiln::populateCatToLLVMPatterns(KilnTypeConverter &converter,
                                     RewritePatternSet &patterns) {
  patterns.add<CatLowering>(converter, patterns.getContext());
}
