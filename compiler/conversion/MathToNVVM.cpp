//===- MathToNVVM.cpp - math functions on NVIDIA GPUs ---------------------===//
//
// Math ops become what upstream Triton uses: the fast hardware approximation
// for fp32 exp/exp2 (ex2.approx, with exp(x) = 2^(x·log2 e)), div.full for
// fp32 division, LLVM's min/max intrinsics, and libdevice's __nv_* functions
// for the rest; the target links libdevice. fp16/bf16 compute in fp32.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/ElementMapping.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// exp and exp2 on f32 (and on f16/bf16 through f32): ex2.approx.f32
/// (.ftz for exp2), on
/// scalars and on tensors alike (a tensor of one element per thread
/// converts to a scalar, and must not fall to the libdevice pattern).
template <typename MathOp, bool isNatural>
struct FastExpLowering : OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = kiln::getElementTypeOrSelf(op.getType());
    if (!(type.isF32() || type.isF16() || type.isBF16()))
      return failure();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value result = kiln::mapElements(
        rewriter, loc, resultType, adaptor.getOperand(), [&](ValueRange xs) {
          Value x = xs[0];
          if (!type.isF32())
            x = LLVM::FPExtOp::create(rewriter, loc, f32, x);
          if (isNatural)
            x = LLVM::FMulOp::create(
                rewriter, loc, x,
                LLVM::ConstantOp::create(
                    rewriter, loc, f32,
                    rewriter.getF32FloatAttr(1.4426950408889634f)));
          // exp2 flushes subnormal results to zero, as upstream's does
          // (one MUFU.EX2; without .ftz, ptxas wraps it in range checks
          // and rescaling: four instructions per element of a softmax).
          Value r = kiln::inlinePtx(rewriter, loc, f32,
                                    isNatural ? "ex2.approx.f32 $0, $1;"
                                              : "ex2.approx.ftz.f32 $0, $1;",
                                    "=f,f", x);
          if (!type.isF32())
            r = LLVM::FPTruncOp::create(rewriter, loc, type, r);
          return r;
        });
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
    if (!kiln::getElementTypeOrSelf(op.getType()).isF32() ||
        op->hasAttr("kiln.div_rn"))
      return failure();
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    Value result = kiln::mapElements(
        rewriter, op.getLoc(), resultType,
        ValueRange{adaptor.getLhs(), adaptor.getRhs()}, [&](ValueRange xy) {
          return kiln::inlinePtx(rewriter, op.getLoc(), rewriter.getF32Type(),
                                 "div.full.f32 $0, $1, $2;", "=r,r,r", xy);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Float min/max as LLVM's intrinsics, which NVPTX selects to min/max.f32
/// (max.NaN.f32 for the NaN-propagating forms), as upstream does: the
/// libdevice pattern would parse all of libdevice for an fmaxf.
template <typename ArithOp, typename LLVMOp>
struct MinMaxLowering : OpConversionPattern<ArithOp> {
  using OpConversionPattern<ArithOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArithOp op, typename ArithOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = kiln::getElementTypeOrSelf(op.getType());
    if (!(type.isF32() || type.isF64() || type.isF16() || type.isBF16()))
      return failure();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    Value result = kiln::mapElements(
        rewriter, op.getLoc(), resultType,
        ValueRange{adaptor.getLhs(), adaptor.getRhs()}, [&](ValueRange xy) {
          return LLVMOp::create(rewriter, op.getLoc(), xy[0], xy[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::populateMathToNVVMPatterns(KilnTypeConverter &converter,
                                      RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FastExpLowering<math::ExpOp, true>,
               FastExpLowering<math::Exp2Op, false>, FastDivLowering,
               MinMaxLowering<arith::MaxNumFOp, LLVM::MaxNumOp>,
               MinMaxLowering<arith::MinNumFOp, LLVM::MinNumOp>,
               MinMaxLowering<arith::MaximumFOp, LLVM::MaximumOp>,
               MinMaxLowering<arith::MinimumFOp, LLVM::MinimumOp>>(
      converter, ctx, /*benefit=*/20);
  // libdevice for everything NVPTX has no instruction for; ahead of
  // math-to-llvm, whose intrinsics NVPTX cannot always select.
  populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/10);
}
