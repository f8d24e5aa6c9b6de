//===- RoundTowardZeroToLLVM.cpp - truncf rounding toward zero
//-------------===//
//
// `x.to(tl.float16, fp_downcast_rounding="rtz")` is an arith.truncf with
// roundingmode = toward_zero. The generic lowering turns it into LLVM's
// constrained fptrunc, which the NVPTX backend emits as cvt.rn, silently
// rounding to nearest; this pattern emits PTX's cvt.rz instead. f64 to a
// 16-bit float truncates to f32 first: truncation composes exactly.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/ElementMapping.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace {

Value cvtRz(OpBuilder &b, Location loc, Value x, Type to) {
  auto ptxName = [](Type t) -> StringRef {
    if (t.isF16())
      return "f16";
    if (t.isBF16())
      return "bf16";
    if (t.isF32())
      return "f32";
    return "f64";
  };
  auto constraint = [](Type t) -> StringRef {
    if (t.isF16() || t.isBF16())
      return "h";
    return t.isF32() ? "f" : "d";
  };
  Type from = x.getType();
  bool sixteen = to.isF16() || to.isBF16();
  // Inline asm passes 16-bit floats as b16 registers.
  Type asmResult = sixteen ? Type(b.getI16Type()) : to;
  std::string text =
      ("cvt.rz." + ptxName(to) + "." + ptxName(from) + " $0, $1;").str();
  std::string constraints =
      ("=" + constraint(to) + "," + constraint(from)).str();
  Value result = kiln::inlinePtx(b, loc, asmResult, text, constraints, x);
  return sixteen ? LLVM::BitcastOp::create(b, loc, to, result) : result;
}

struct TruncTowardZeroLowering : OpConversionPattern<arith::TruncFOp> {
  TruncTowardZeroLowering(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/30) {}

  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<arith::RoundingMode> mode = op.getRoundingmode();
    if (!mode || *mode != arith::RoundingMode::toward_zero)
      return failure();
    Type to = kiln::getElementTypeOrSelf(op.getType());
    if (!(to.isF16() || to.isBF16() || to.isF32()))
      return op.emitOpError("rounding toward zero to ")
             << to << " is not supported (only to fp32, fp16 and bf16)";
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    Location loc = op.getLoc();
    Value result = kiln::mapElements(
        rewriter, loc, resultType, adaptor.getIn(), [&](ValueRange x) {
          Value v = x[0];
          if (v.getType().isF64() && !to.isF32())
            v = cvtRz(rewriter, loc, v, rewriter.getF32Type());
          return cvtRz(rewriter, loc, v, to);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::populateRoundTowardZeroToLLVMPatterns(KilnTypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns.add<TruncTowardZeroLowering>(converter, patterns.getContext());
}
