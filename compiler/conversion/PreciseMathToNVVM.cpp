//===- PreciseMathToNVVM.cpp - IEEE-rounded sqrt and division -------------===//
//
// tl.sqrt_rn and tl.div_rn promise round-to-nearest results, which the
// default lowerings (sqrt.approx, div.full) do not give. They become the
// NVVM intrinsics for sqrt.rn / div.rn on f32 and f64, which LLVM still
// understands (unlike inline PTX) and NVPTX selects as single instructions.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/ElementMapping.h"
#include "compiler/conversion/OpFamilyLowerings.h"

using namespace mlir;

namespace {

/// The intrinsic for `base` ("sqrt.rn", "div.rn") on `type`, or "" when none.
std::string roundedIntrinsic(StringRef base, Type type) {
  if (type.isF32())
    return ("llvm.nvvm." + base + ".f").str();
  if (type.isF64())
    return ("llvm.nvvm." + base + ".d").str();
  return "";
}

template <typename PreciseOp>
struct PreciseMathLowering : OpConversionPattern<PreciseOp> {
  PreciseMathLowering(TypeConverter &converter, MLIRContext *ctx,
                      StringRef base)
      : OpConversionPattern<PreciseOp>(converter, ctx), base(base) {}

  LogicalResult
  matchAndRewrite(PreciseOp op, typename PreciseOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = kiln::getElementTypeOrSelf(op.getType());
    std::string intrinsic = roundedIntrinsic(base, element);
    if (intrinsic.empty())
      return op.emitOpError("needs f32 or f64 operands, got ") << element;
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    Location loc = op.getLoc();
    Value result = kiln::mapElements(
        rewriter, loc, resultType, adaptor.getOperands(), [&](ValueRange args) {
          return LLVM::CallIntrinsicOp::create(
                     rewriter, loc, element,
                     rewriter.getStringAttr(intrinsic), args)
              .getResult(0);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  std::string base;
};

} // namespace

void kiln::populatePreciseMathToNVVMPatterns(KilnTypeConverter &converter,
                                             RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<PreciseMathLowering<kiln::PreciseSqrtOp>>(converter, ctx,
                                                          "sqrt.rn");
  patterns.add<PreciseMathLowering<kiln::PreciseDivFOp>>(converter, ctx,
                                                          "div.rn");
}
