//===- PointerCastsToLLVM.cpp - reinterpreting pointers -------------------===//
//
// kiln.ptr_cast changes only the pointee type (tl.pointer_type casts, and
// bool pointers read as bytes). LLVM pointers are opaque, so the converted
// pointers pass through unchanged; the element type matters only to the
// loads, stores and addptrs that use them, which carry their own.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/OpFamilyLowerings.h"

using namespace mlir;

namespace {

struct PtrCastLowering : OpConversionPattern<kiln::PtrCastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::PtrCastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (resultType != adaptor.getSrc().getType())
      return rewriter.notifyMatchFailure(op, "casts between layouts");
    rewriter.replaceOp(op, adaptor.getSrc());
    return success();
  }
};

} // namespace

void kiln::populatePointerCastsToLLVMPatterns(KilnTypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<PtrCastLowering>(converter, patterns.getContext());
}
