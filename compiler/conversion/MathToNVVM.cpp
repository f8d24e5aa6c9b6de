//===- MathToNVVM.cpp - math functions on NVIDIA GPUs ---------------------===//
//
// Math ops become what upstream Triton uses: the fast hardware approximation
// for fp32 exp/exp2 (ex2.approx, with exp(x) = 2^(x·log2 e)), div.full for
// fp32 division, LLVM's abs, min and max intrinsics, and libdevice's __nv_*
// functions for the rest; the target links libdevice. fp16/bf16 compute in
// fp32.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/ElementMapping.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/ir/TargetInfo.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

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

/// Float abs, min and max as LLVM's intrinsics, as upstream lowers them.
/// NVPTX selects min/max.f32 (max.NaN.f32 for the NaN-propagating forms):
/// the libdevice pattern would parse all of libdevice for an fmaxf. And
/// libdevice's __nv_fabsf flushes subnormals under the ftz flag and, a call
/// of its own, keeps InstCombine from taking |fpext x| as fpext |x|: the
/// amax of a bf16 tile (`tl.max(tl.abs(x.to(tl.float32)))`, every fp8
/// quantizer's) then ran in f32, a conversion per element more than
/// upstream's bf16 abs and max.
template <typename SourceOp, typename LLVMOp>
struct FloatIntrinsicLowering : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = kiln::getElementTypeOrSelf(op.getType());
    if (!(type.isF32() || type.isF64() || type.isF16() || type.isBF16()))
      return failure();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    Value result = kiln::mapElements(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](ValueRange xs) {
          return LLVMOp::create(rewriter, op.getLoc(),
                                TypeRange{xs[0].getType()}, xs)
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A symmetric fp32 clamp, `tl.clamp(x, -c, c)` with c > 0 (an fp8
/// quantizer's saturation), as min(max(x, -c), c): one
/// min.xorsign.abs.f32 (|x| capped at c, with x's sign) where the target
/// has it, as upstream lowers it, instead of a max and a min. The same value
/// for every x but NaN, which becomes c with the NaN's sign where the clamp
/// does not propagate NaNs (upstream's result), NaN where it does (.NaN).
template <typename MinOp, typename MaxOp, bool propagatesNan>
struct SymmetricClampLowering : OpConversionPattern<MinOp> {
  using OpConversionPattern<MinOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MinOp op, typename MinOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!kiln::getElementTypeOrSelf(op.getType()).isF32())
      return failure();
    auto module = op->template getParentOfType<ModuleOp>();
    if (!module || !kiln::TargetInfo::of(module).hasXorsignAbsMin())
      return failure();
    // c and -c: scalar or splat constants.
    APFloat high(0.0f), low(0.0f);
    auto max = op.getLhs().template getDefiningOp<MaxOp>();
    if (!max || !matchPattern(op.getRhs(), m_ConstantFloat(&high)) ||
        high.isNegative() || high.isZero() || high.isNaN())
      return failure();
    // x and -c, in either order.
    for (unsigned i = 0; i < 2; ++i) {
      if (!matchPattern(max->getOperand(1 - i), m_ConstantFloat(&low)) ||
          low != neg(high))
        continue;
      Value x = rewriter.getRemappedValue(max->getOperand(i));
      Type resultType = this->getTypeConverter()->convertType(op.getType());
      if (!x || !resultType)
        return failure();
      Value result = kiln::mapElements(
          rewriter, op.getLoc(), resultType, ValueRange{x, adaptor.getRhs()},
          [&](ValueRange xc) {
            return kiln::inlinePtx(rewriter, op.getLoc(), rewriter.getF32Type(),
                                   propagatesNan
                                       ? "min.NaN.xorsign.abs.f32 $0, $1, $2;"
                                       : "min.xorsign.abs.f32 $0, $1, $2;",
                                   "=f,f,f", xc);
          });
      rewriter.replaceOp(op, result);
      return success();
    }
    return failure();
  }
};

} // namespace

void kiln::populateMathToNVVMPatterns(KilnTypeConverter &converter,
                                      RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<FastExpLowering<math::ExpOp, true>,
               FastExpLowering<math::Exp2Op, false>, FastDivLowering,
               FloatIntrinsicLowering<math::AbsFOp, LLVM::FAbsOp>,
               FloatIntrinsicLowering<arith::MaxNumFOp, LLVM::MaxNumOp>,
               FloatIntrinsicLowering<arith::MinNumFOp, LLVM::MinNumOp>,
               FloatIntrinsicLowering<arith::MaximumFOp, LLVM::MaximumOp>,
               FloatIntrinsicLowering<arith::MinimumFOp, LLVM::MinimumOp>>(
      converter, ctx, /*benefit=*/20);
  patterns
      .add<SymmetricClampLowering<arith::MinNumFOp, arith::MaxNumFOp, false>,
           SymmetricClampLowering<arith::MinimumFOp, arith::MaximumFOp, true>>(
          converter, ctx, /*benefit=*/30);
  // libdevice for everything NVPTX has no instruction for; ahead of
  // math-to-llvm, whose intrinsics NVPTX cannot always select.
  populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/10);
}
