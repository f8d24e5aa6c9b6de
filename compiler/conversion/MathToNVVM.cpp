//===- MathToNVVM.cpp - math functions on NVIDIA GPUs ---------------------===//
//
// Scalar math ops (tensor ones were split per element before) become what
// upstream Triton uses: the fast hardware approximation for fp32 exp/exp2
// (ex2.approx, with exp(x) = 2^(x·log2 e)), and libdevice's __nv_* functions
// for the rest; the target links libdevice. fp16/bf16 compute in fp32.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/LoweringUtils.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// exp and exp2 on f32 (and on f16/bf16 through f32): ex2.approx.f32.
template <typename MathOp, bool isNatural>
struct FastExpLowering : OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!(type.isF32() || type.isF16() || type.isBF16()))
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value x = adaptor.getOperand();
    if (!type.isF32())
      x = LLVM::FPExtOp::create(rewriter, loc, f32, x);
    if (isNatural)
      x = LLVM::FMulOp::create(
          rewriter, loc, x,
          LLVM::ConstantOp::create(rewriter, loc, f32,
                                   rewriter.getF32FloatAttr(1.4426950408889634f)));
    auto asmOp = LLVM::InlineAsmOp::create(
        rewriter, loc, f32, ValueRange{x},
        rewriter.getStringAttr("ex2.approx.f32 $0, $1;"),
        rewriter.getStringAttr("=f,f"), UnitAttr(), UnitAttr(),
        LLVM::TailCallKindAttr::get(rewriter.getContext(),
                                    LLVM::tailcallkind::TailCallKind::None),
        LLVM::AsmDialectAttr::get(rewriter.getContext(), LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    Value result = asmOp.getResult(0);
    if (!type.isF32())
      result = LLVM::FPTruncOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// fp32 division as upstream Triton does it: div.full.f32 (2 ulp), unless
/// the op asks for IEEE rounding (tl.div_rn sets `kiln.div_rn`).
struct FastDivLowering : OpConversionPattern<arith::DivFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::DivFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isF32() || op->hasAttr("kiln.div_rn"))
      return failure();
    auto asmOp = LLVM::InlineAsmOp::create(
        rewriter, op.getLoc(), rewriter.getF32Type(),
        ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        rewriter.getStringAttr("div.full.f32 $0, $1, $2;"),
        rewriter.getStringAttr("=r,r,r"), UnitAttr(), UnitAttr(),
        LLVM::TailCallKindAttr::get(rewriter.getContext(),
                                    LLVM::tailcallkind::TailCallKind::None),
        LLVM::AsmDialectAttr::get(rewriter.getContext(), LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    rewriter.replaceOp(op, asmOp.getResult(0));
    return success();
  }
};

} // namespace

void kiln::populateMathToNVVMPatterns(KilnTypeConverter &converter,
                                      RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FastExpLowering<math::ExpOp, true>,
               FastExpLowering<math::Exp2Op, false>, FastDivLowering>(
      converter, ctx, /*benefit=*/20);
  // libdevice for everything NVPTX has no instruction for; ahead of
  // math-to-llvm, whose intrinsics NVPTX cannot always select.
  populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/10);
}
