//===- Fp8CastsToLLVM.cpp - conversions to and from fp8 -------------------===//
//
// fp8 values (f8E4M3FN as tl.float8e4nv, f8E5M2 as tl.float8e5) are bytes
// to LLVM, which has no fp8 arithmetic, so arith.truncf/extf to and from
// them become PTX conversions. From sm_89 these are the cvt instructions
// with satfinite (out-of-range values saturate to the largest finite
// value, NaN stays NaN), as upstream Triton emits. Before sm_89:
//   - e5m2 is the high byte of an f16, so widening is a shift, and
//     narrowing rounds an f16 to its high byte (to nearest even), with the
//     same saturation; f32 first goes to f16 rounding to odd, which keeps
//     the final rounding correct;
//   - e4m3 is not supported, as in upstream Triton (a clear error).
// Wider and narrower sides (f32, f64, bf16) pass through f16 or f32, which
// hold every fp8 value exactly.
//
// tl.float8e4b15 (carried in f8E4M3B11FNUZ, kiln::isFp8E4B15) is f16's bits
// 13..7 beside the sign, on every target, as upstream defines it: from f16
// the magnitude is clamped to 1.75 (inf and NaN too) and rounded half up to
// three mantissa bits; from f32 it first goes to f16 toward zero; to any
// wider type it goes through f16, which holds it exactly. The front end
// converts it only to and from f16 and f32 (and bf16 from it).
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/ElementMapping.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/ir/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace {

Value i16Constant(OpBuilder &b, Location loc, int16_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI16Type(),
                                  b.getI16IntegerAttr(v));
}

/// An f16's sign bit and the rest of its bits, as i16s.
std::pair<Value, Value> signAndMagnitude(OpBuilder &b, Location loc,
                                         Value half) {
  Value bits = LLVM::BitcastOp::create(b, loc, b.getI16Type(), half);
  return {
      LLVM::AndOp::create(b, loc, bits, i16Constant(b, loc, int16_t(0x8000))),
      LLVM::AndOp::create(b, loc, bits, i16Constant(b, loc, 0x7fff))};
}

/// An f16 value as `to` (f16, bf16 through f32, or wider), exactly.
Value widenHalf(OpBuilder &b, Location loc, Value half, Type to) {
  if (to.isF16())
    return half;
  if (to.isBF16())
    return LLVM::FPTruncOp::create(
        b, loc, to, LLVM::FPExtOp::create(b, loc, b.getF32Type(), half));
  return LLVM::FPExtOp::create(b, loc, to, half);
}

/// The bits (i16) of an f32 rounded toward zero to f16.
Value f32ToF16BitsTowardZero(OpBuilder &b, Location loc, Value x) {
  return kiln::inlinePtx(b, loc, b.getI16Type(), "cvt.rz.f16.f32 $0, $1;",
                         "=h,f", x);
}

/// An f16 rounded to its high byte (e5m2), to nearest even, saturating.
Value f16ToE5M2Software(OpBuilder &b, Location loc, Value half) {
  auto [sign, magnitude] = signAndMagnitude(b, loc, half);
  Value lsb = LLVM::AndOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, magnitude, i16Constant(b, loc, 8)),
      i16Constant(b, loc, 1));
  Value rounded = LLVM::LShrOp::create(
      b, loc,
      LLVM::AddOp::create(
          b, loc, magnitude,
          LLVM::AddOp::create(b, loc, lsb, i16Constant(b, loc, 0x7f))),
      i16Constant(b, loc, 8));
  // Largest finite e5m2: 0x7b (57344).
  Value tooLarge = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt,
                                        rounded, i16Constant(b, loc, 0x7b));
  rounded = LLVM::SelectOp::create(b, loc, tooLarge, i16Constant(b, loc, 0x7b),
                                   rounded);
  Value isNaN = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt,
                                     magnitude, i16Constant(b, loc, 0x7c00));
  rounded =
      LLVM::SelectOp::create(b, loc, isNaN, i16Constant(b, loc, 0x7f), rounded);
  Value byte = LLVM::OrOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, sign, i16Constant(b, loc, 8)),
      rounded);
  return LLVM::TruncOp::create(b, loc, b.getI8Type(), byte);
}

/// f32 to f16 rounding to odd: truncate, and set the last bit if inexact.
Value f32ToF16RoundToOdd(OpBuilder &b, Location loc, Value x) {
  Value truncated = f32ToF16BitsTowardZero(b, loc, x);
  Value back = LLVM::FPExtOp::create(
      b, loc, b.getF32Type(),
      LLVM::BitcastOp::create(b, loc, b.getF16Type(), truncated));
  Value inexact =
      LLVM::FCmpOp::create(b, loc, LLVM::FCmpPredicate::one, back, x);
  Value odd = LLVM::OrOp::create(b, loc, truncated, i16Constant(b, loc, 1));
  Value bits = LLVM::SelectOp::create(b, loc, inexact, odd, truncated);
  return LLVM::BitcastOp::create(b, loc, b.getF16Type(), bits);
}

/// An f16 to its fp8e4b15 byte.
Value f16ToE4B15(OpBuilder &b, Location loc, Value half) {
  auto [sign, magnitude] = signAndMagnitude(b, loc, half);
  // As unsigned integers, magnitudes order as the values do, and inf and
  // NaN lie above 1.75 (0x3f00): one compare clamps them all.
  Value largest = i16Constant(b, loc, 0x3f00);
  Value tooLarge = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt,
                                        magnitude, largest);
  magnitude = LLVM::SelectOp::create(b, loc, tooLarge, largest, magnitude);
  Value rounded = LLVM::AddOp::create(
      b, loc, LLVM::ShlOp::create(b, loc, magnitude, i16Constant(b, loc, 1)),
      i16Constant(b, loc, 0x80));
  Value byte =
      LLVM::LShrOp::create(b, loc, LLVM::OrOp::create(b, loc, sign, rounded),
                           i16Constant(b, loc, 8));
  return LLVM::TruncOp::create(b, loc, b.getI8Type(), byte);
}

/// An fp8e4b15 byte to the f16 of the same value.
Value e4b15ToF16(OpBuilder &b, Location loc, Value byte) {
  Value wide = LLVM::ZExtOp::create(b, loc, b.getI16Type(), byte);
  Value sign = LLVM::ShlOp::create(
      b, loc, LLVM::AndOp::create(b, loc, wide, i16Constant(b, loc, 0x80)),
      i16Constant(b, loc, 8));
  Value rest = LLVM::ShlOp::create(
      b, loc, LLVM::AndOp::create(b, loc, wide, i16Constant(b, loc, 0x7f)),
      i16Constant(b, loc, 7));
  return LLVM::BitcastOp::create(b, loc, b.getF16Type(),
                                 LLVM::OrOp::create(b, loc, sign, rest));
}

/// One element (f16 or f32, checked by the caller) to fp8e4b15, or from it
/// to `to`.
Value convertE4B15(OpBuilder &b, Location loc, Value x, Type to,
                   bool narrowing) {
  if (!narrowing)
    return widenHalf(b, loc, e4b15ToF16(b, loc, x), to);
  if (x.getType().isF32())
    x = LLVM::BitcastOp::create(b, loc, b.getF16Type(),
                                f32ToF16BitsTowardZero(b, loc, x));
  return f16ToE4B15(b, loc, x);
}

/// Two elements (f32 or f16) to their fp8 bytes with one cvt (sm_89+):
/// `low`'s byte in the lower half of the pair, as PTX packs the second
/// operand.
std::pair<Value, Value> truncPairToFp8(OpBuilder &b, Location loc, Value low,
                                       Value high, bool e4m3) {
  std::string format = e4m3 ? "e4m3x2" : "e5m2x2";
  Value pair;
  if (low.getType().isF16())
    pair = kiln::inlinePtx(
        b, loc, b.getI16Type(),
        "{ .reg .b32 kiln_pair; mov.b32 kiln_pair, {$2, $1}; "
        "cvt.rn.satfinite." +
            format + ".f16x2 $0, kiln_pair; }",
        "=h,h,h",
        ValueRange{LLVM::BitcastOp::create(b, loc, b.getI16Type(), high),
                   LLVM::BitcastOp::create(b, loc, b.getI16Type(), low)});
  else
    pair = kiln::inlinePtx(b, loc, b.getI16Type(),
                           "cvt.rn.satfinite." + format + ".f32 $0, $1, $2;",
                           "=h,f,f", ValueRange{high, low});
  // The bytes as the lanes of a 2 x i8 view of the pair, not a trunc and a
  // shift: where a store packs pairs back into words, LLVM then sees whole
  // halves moved (one mov.b32 of two pairs), not bytes inserted one by one
  // (two bfi and two cvt a word: torchao's fp8 quantizers).
  Value bytes = LLVM::BitcastOp::create(
      b, loc, VectorType::get({2}, b.getI8Type()), pair);
  Value lowByte = LLVM::ExtractElementOp::create(b, loc, bytes,
                                                 kiln::i32Constant(b, loc, 0));
  Value highByte = LLVM::ExtractElementOp::create(b, loc, bytes,
                                                  kiln::i32Constant(b, loc, 1));
  return {lowByte, highByte};
}

/// One element of `from` (already converted) to the fp8 byte; null when
/// the target cannot.
Value truncToFp8(OpBuilder &b, Location loc, Value x, bool e4m3,
                 unsigned computeCapability) {
  Type from = x.getType();
  auto toF32 = [&](Value v) -> Value {
    if (v.getType().isF32())
      return v;
    if (v.getType().isBF16())
      return LLVM::FPExtOp::create(b, loc, b.getF32Type(), v);
    return LLVM::FPTruncOp::create(b, loc, b.getF32Type(), v);
  };
  if (computeCapability >= 89) {
    Value single = from.isF16() ? x : toF32(x);
    return truncPairToFp8(b, loc, single, single, e4m3).first;
  }
  if (e4m3)
    return Value();
  Value half = from.isF16() ? x : f32ToF16RoundToOdd(b, loc, toF32(x));
  return f16ToE5M2Software(b, loc, half);
}

/// One fp8 byte to `to`; null when the target cannot.
Value extFromFp8(OpBuilder &b, Location loc, Value byte, Type to, bool e4m3,
                 unsigned computeCapability) {
  Value halfBits;
  if (computeCapability >= 89) {
    std::string format = e4m3 ? "e4m3x2" : "e5m2x2";
    halfBits = kiln::inlinePtx(
        b, loc, b.getI16Type(),
        "{ .reg .b32 kiln_pair; .reg .b16 kiln_lo, kiln_hi; "
        "cvt.rn.f16x2." +
            format +
            " kiln_pair, $1; "
            "mov.b32 {kiln_lo, kiln_hi}, kiln_pair; mov.b16 $0, kiln_lo; }",
        "=h,h", ValueRange{LLVM::ZExtOp::create(b, loc, b.getI16Type(), byte)});
  } else if (e4m3) {
    return Value();
  } else {
    halfBits = LLVM::ShlOp::create(
        b, loc, LLVM::ZExtOp::create(b, loc, b.getI16Type(), byte),
        i16Constant(b, loc, 8));
  }
  return widenHalf(
      b, loc, LLVM::BitcastOp::create(b, loc, b.getF16Type(), halfBits), to);
}

/// arith.truncf to fp8 or arith.extf from fp8, on scalars or per element;
/// ahead of the generic element-wise split, which would build fp8 scalars.
template <typename CastOp>
struct Fp8CastLowering : OpConversionPattern<CastOp> {
  Fp8CastLowering(TypeConverter &converter, MLIRContext *ctx,
                  unsigned computeCapability)
      : OpConversionPattern<CastOp>(converter, ctx, /*benefit=*/20),
        computeCapability(computeCapability) {}

  LogicalResult
  matchAndRewrite(CastOp op, typename CastOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool narrowing = std::is_same_v<CastOp, arith::TruncFOp>;
    Type fp8 = kiln::getElementTypeOrSelf(narrowing ? op.getType()
                                                    : op.getIn().getType());
    bool e4b15 = kiln::isFp8E4B15(fp8);
    if (!e4b15 && !kiln::isFp8(fp8))
      return failure();
    if (e4b15) {
      Type other = kiln::getElementTypeOrSelf(narrowing ? op.getIn().getType()
                                                        : op.getType());
      if (!(other.isF16() || other.isF32() || (!narrowing && other.isBF16())))
        return op.emitOpError("fp8e4b15 converts from fp16 and fp32 and to "
                              "fp16, bf16 and fp32 only, not ")
               << (narrowing ? "from " : "to ") << other;
    }
    bool e4m3 = isa<Float8E4M3FNType>(fp8);
    if (e4m3 && computeCapability < 89)
      return op.emitOpError("fp8e4nv conversions need sm_89 or newer, as in "
                            "Triton (fp8e5 works from sm_80)");
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    Type resultElement = this->getTypeConverter()->convertType(
        kiln::getElementTypeOrSelf(op.getType()));
    if (!resultType || !resultElement)
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> in =
        kiln::unpackElements(rewriter, loc, adaptor.getIn());
    if (!e4b15 && narrowing && computeCapability >= 89 && in.size() % 2 == 0 &&
        (in[0].getType().isF32() || in[0].getType().isF16())) {
      // Two elements per cvt: the instruction converts a pair anyway, and
      // half as many conversions (and registers holding their results)
      // matter in a big epilogue (a 128x256 fp8 tile).
      SmallVector<Value> bytes;
      for (size_t i = 0; i < in.size(); i += 2) {
        auto [low, high] =
            truncPairToFp8(rewriter, loc, in[i], in[i + 1], e4m3);
        bytes.push_back(low);
        bytes.push_back(high);
      }
      rewriter.replaceOp(op,
                         kiln::packElements(rewriter, loc, resultType, bytes));
      return success();
    }
    Value result = kiln::mapElements(
        rewriter, loc, resultType, adaptor.getIn(), [&](ValueRange x) {
          if (e4b15)
            return convertE4B15(rewriter, loc, x[0], resultElement, narrowing);
          return narrowing
                     ? truncToFp8(rewriter, loc, x[0], e4m3, computeCapability)
                     : extFromFp8(rewriter, loc, x[0], resultElement, e4m3,
                                  computeCapability);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  unsigned computeCapability;
};

} // namespace

void kiln::populateFp8CastsToLLVMPatterns(KilnTypeConverter &converter,
                                          unsigned computeCapability,
                                          RewritePatternSet &patterns) {
  patterns
      .add<Fp8CastLowering<arith::TruncFOp>, Fp8CastLowering<arith::ExtFOp>>(
          converter, patterns.getContext(), computeCapability);
}
