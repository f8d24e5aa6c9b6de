//===- BuiltinsScaledDot.cpp - tl.dot_scaled as upcasts and a tl.dot ------===//
//
// tl.dot_scaled multiplies two blocks in microscaling formats: fp8 (e4m3,
// e5m2), fp4 (e2m1, two values per uint8 along K, the first in the low
// nibble), bf16 or fp16, each optionally scaled by one e8m0 exponent (a
// uint8, 2^(s-127)) per 32 elements along K. Kiln's targets (sm_80 to
// sm_90a) have no scaled MMA, so the call is decomposed here the way
// upstream Triton emulates it on those GPUs: each operand is upcast to bf16
// (fp16 when either operand is fp16), multiplied by its scale broadcast over
// its group of 32 (a scale of 0xFF gives NaN unless fast_math), and the two
// meet in an ordinary tl.dot with fp32 accumulation, which reuses the
// tensor-core paths. When an operand is e2m1 packed along K, the product is
// instead two dots, over the even and over the odd elements of K (the low
// and high nibbles as they are): interleaving the nibbles would cost
// register shuffles, and the sum differs only in the order of fp32 adds.
// Formats, scale types and shapes Kiln cannot take (fp8 scales, 3-D
// operands) are errors naming them.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace kiln::frontend;

namespace {

constexpr StringRef kName = "tl.dot_scaled";
constexpr int64_t kGroup = 32; // elements along K per e8m0 scale

/// One operand of the scaled dot as the call describes it.
struct ScaledOperand {
  FValue value;
  std::optional<FValue> scale; // uint8 e8m0, [M or N, K / 32]
  std::string format;          // e2m1, e4m3, e5m2, bf16, fp16
  bool kPack = true;           // e2m1 only: packed along K (else M or N)
  bool isLhs = true;
};

/// The dtype the format's values have once decoded (e2m1 stays packed
/// uint8 until unpackFp4), and the unsigned type that may carry its bits.
struct FormatTypes {
  ScalarKind decoded;
  ScalarKind storage;
};
std::optional<FormatTypes> formatTypes(StringRef format) {
  if (format == "e4m3")
    return FormatTypes{ScalarKind::F8E4NV, ScalarKind::U8};
  if (format == "e5m2")
    return FormatTypes{ScalarKind::F8E5, ScalarKind::U8};
  if (format == "bf16")
    return FormatTypes{ScalarKind::BF16, ScalarKind::U16};
  if (format == "fp16")
    return FormatTypes{ScalarKind::F16, ScalarKind::U16};
  if (format == "e2m1")
    return FormatTypes{ScalarKind::U8, ScalarKind::U8};
  return std::nullopt;
}

/// `type` with element type `kind`.
TritonType retyped(const TritonType &type, ScalarKind kind) {
  TritonType t = type;
  t.element = DType(kind);
  return t;
}

std::optional<FValue> binaryOp(Emitter &e, StringRef op, const FValue &a,
                               const FValue &b, SMLoc loc) {
  return e.binary(op, a, b, loc);
}

/// The e2m1 values of `nibbles` (uint8 holding 0..15), exactly, as fp32:
/// sign, two exponent bits (bias 1) and one mantissa bit; exponent 0 holds
/// 0 and the subnormal 0.5.
std::optional<FValue> decodeE2M1(Emitter &e, const FValue &nibbles, SMLoc loc) {
  FValue n = e.castTo(nibbles, DType(ScalarKind::U32), loc);
  auto bin = [&](StringRef op, const FValue &a, int64_t b) {
    return binaryOp(e, op, a, FValue::integer(b), loc);
  };
  auto sign = bin(">>", n, 3);
  auto expField = bin(">>", n, 1);
  expField = expField ? bin("&", *expField, 3) : std::nullopt;
  auto mant = bin("&", n, 1);
  if (!sign || !expField || !mant)
    return std::nullopt;
  // Normal: exponent e - 1 + 127 in fp32, the mantissa bit on top.
  auto biased = bin("+", *expField, 126);
  auto normal = biased ? bin("<<", *biased, 23) : std::nullopt;
  auto mantBits = bin("<<", *mant, 22);
  normal = normal && mantBits ? binaryOp(e, "|", *normal, *mantBits, loc)
                              : std::nullopt;
  // Subnormal: 0.5 (2^-1, fp32 exponent 126) when the mantissa bit is set.
  auto subnormal = bin("*", *mant, int64_t(126) << 23);
  auto isSub = bin("==", *expField, 0);
  auto signBits = bin("<<", *sign, 31);
  if (!normal || !subnormal || !isSub || !signBits)
    return std::nullopt;
  mlir::Value bits = mlir::arith::SelectOp::create(
      e.getBuilder(), e.location(loc), isSub->value, subnormal->value,
      normal->value);
  auto withSign =
      binaryOp(e, "|", FValue::runtime(bits, normal->type), *signBits, loc);
  if (!withSign)
    return std::nullopt;
  return e.bitcastTo(*withSign, retyped(withSign->type, ScalarKind::F32), loc);
}

/// Unpacks an e2m1 operand into `type` values: each uint8 holds two values
/// along `axis`, the first in its low nibble; the result has twice the
/// bytes' size there.
std::optional<FValue> unpackFp4(Emitter &e, const FValue &packed, int64_t axis,
                                ScalarKind type, SMLoc loc) {
  auto lowBits = binaryOp(e, "&", packed, FValue::integer(15), loc);
  auto highBits = binaryOp(e, ">>", packed, FValue::integer(4), loc);
  std::optional<FValue> low =
      lowBits ? decodeE2M1(e, *lowBits, loc) : std::nullopt;
  std::optional<FValue> high =
      highBits ? decodeE2M1(e, *highBits, loc) : std::nullopt;
  if (!low || !high)
    return std::nullopt;
  low = e.castTo(*low, DType(type), loc); // exact: e2m1 fits bf16 and fp16
  high = e.castTo(*high, DType(type), loc);
  // [A, B] x2 -> [A, B, 2]: element i of the pair axis is value 2b + i.
  llvm::SmallVector<int64_t> joinedShape(low->type.shape);
  joinedShape.push_back(2);
  TritonType joinedType = low->type.withShape(joinedShape);
  FValue joined =
      FValue::runtime(kiln::JoinOp::create(e.getBuilder(), e.location(loc),
                                           joinedType.toMLIR(e.getContext()),
                                           low->value, high->value),
                      joinedType);
  if (axis == 0) // [A, B, 2] -> [A, 2, B]: the pair next to A
    joined = permuteDims(e, joined, {0, 2, 1}, loc);
  llvm::SmallVector<int64_t> shape(packed.type.shape);
  shape[axis] *= 2;
  return reshapeTo(e, joined, shape, false, loc);
}

/// `scale` ([rows, K / 32], one per row of the operand as the call lays
/// it out: M for lhs, N for rhs) as `type` values, 2^(s-127), or NaN for
/// 0xFF unless `fastMath`, each repeated `run` times along K (32; 16 for a
/// half of K's even or odd elements) and laid out as the operand ([M, K]
/// or [K, N]).
std::optional<FValue> expandScale(Emitter &e, const FValue &scale,
                                  ScalarKind type, bool isLhs, bool fastMath,
                                  int64_t run, SMLoc loc) {
  // The exponent byte placed in a float's exponent field: bf16 directly,
  // fp16 through fp32 (its range is narrower; the conversion rounds).
  std::optional<FValue> value;
  if (type == ScalarKind::BF16) {
    auto bits = binaryOp(e, "<<", e.castTo(scale, DType(ScalarKind::U16), loc),
                         FValue::integer(7), loc);
    value = bits
                ? e.bitcastTo(*bits, retyped(bits->type, ScalarKind::BF16), loc)
                : std::nullopt;
  } else {
    auto bits = binaryOp(e, "<<", e.castTo(scale, DType(ScalarKind::U32), loc),
                         FValue::integer(23), loc);
    value = bits ? e.bitcastTo(*bits, retyped(bits->type, ScalarKind::F32), loc)
                 : std::nullopt;
    if (value)
      value = e.castTo(*value, DType(type), loc);
  }
  if (!value)
    return std::nullopt;
  if (!fastMath) {
    auto isNaN = binaryOp(e, "==", scale, FValue::integer(0xFF), loc);
    if (!isNaN)
      return std::nullopt;
    FValue nan = e.constant(FValue::floating(std::nan("")), value->type, loc);
    value = FValue::runtime(
        mlir::arith::SelectOp::create(e.getBuilder(), e.location(loc),
                                      isNaN->value, nan.value, value->value),
        value->type);
  }
  int64_t rows = scale.type.shape[0], groups = scale.type.shape[1];
  FValue grouped = expandDims(e, *value, 2, loc);
  std::optional<FValue> spread =
      e.broadcastTo(grouped, {rows, groups, run}, loc);
  if (!spread)
    return std::nullopt;
  FValue flat = reshapeTo(e, *spread, {rows, groups * run}, false, loc);
  return isLhs ? flat : permuteDims(e, flat, {1, 0}, loc);
}

/// The operand as `computeType` values, scaled.
std::optional<FValue> upcast(Emitter &e, const ScaledOperand &op,
                             ScalarKind computeType, bool fastMath, SMLoc loc) {
  std::optional<FValue> v = op.value;
  if (op.format == "e2m1") {
    int64_t packAxis = op.kPack == op.isLhs ? 1 : 0;
    v = unpackFp4(e, *v, packAxis, computeType, loc);
  } else if (v->type.element.getKind() != formatTypes(op.format)->decoded) {
    v = e.bitcastTo(*v, retyped(v->type, formatTypes(op.format)->decoded), loc);
  }
  if (!v)
    return std::nullopt;
  FValue converted = e.castTo(*v, DType(computeType), loc);
  if (!op.scale)
    return converted;
  std::optional<FValue> scale =
      expandScale(e, *op.scale, computeType, op.isLhs, fastMath, kGroup, loc);
  return scale ? binaryOp(e, "*", converted, *scale, loc) : std::nullopt;
}

/// The operand's elements at even and at odd positions along K, as
/// `computeType` values, scaled: [M, K / 2] or [K / 2, N] each. A K-packed
/// e2m1 operand gives them directly (its low and high nibbles); others are
/// split after their upcast.
std::optional<std::pair<FValue, FValue>>
upcastHalves(Emitter &e, const ScaledOperand &op, ScalarKind computeType,
             bool fastMath, SMLoc loc) {
  std::optional<FValue> even, odd;
  if (op.format == "e2m1" && op.kPack) {
    auto lowBits = binaryOp(e, "&", op.value, FValue::integer(15), loc);
    auto highBits = binaryOp(e, ">>", op.value, FValue::integer(4), loc);
    even = lowBits ? decodeE2M1(e, *lowBits, loc) : std::nullopt;
    odd = highBits ? decodeE2M1(e, *highBits, loc) : std::nullopt;
    if (!even || !odd)
      return std::nullopt;
    even = e.castTo(*even, DType(computeType), loc);
    odd = e.castTo(*odd, DType(computeType), loc);
  } else {
    ScaledOperand unscaled = op;
    unscaled.scale.reset();
    std::optional<FValue> full =
        upcast(e, unscaled, computeType, fastMath, loc);
    if (!full)
      return std::nullopt;
    // [M, K] -> [M, K/2, 2]; [K, N] -> [K/2, 2, N] -> [K/2, N, 2]: the
    // pair last, then split.
    llvm::SmallVector<int64_t> shape(full->type.shape);
    FValue paired =
        op.isLhs ? reshapeTo(e, *full, {shape[0], shape[1] / 2, 2}, false, loc)
                 : permuteDims(e,
                               reshapeTo(e, *full, {shape[0] / 2, 2, shape[1]},
                                         false, loc),
                               {0, 2, 1}, loc);
    TritonType half = paired.type.withShape(
        llvm::ArrayRef<int64_t>(paired.type.shape).drop_back());
    mlir::Type t = half.toMLIR(e.getContext());
    auto split = kiln::SplitOp::create(e.getBuilder(), e.location(loc), t, t,
                                       paired.value);
    even = FValue::runtime(split.getLhs(), half);
    odd = FValue::runtime(split.getRhs(), half);
  }
  if (op.scale) {
    std::optional<FValue> scale = expandScale(
        e, *op.scale, computeType, op.isLhs, fastMath, kGroup / 2, loc);
    even = scale ? binaryOp(e, "*", *even, *scale, loc) : std::nullopt;
    odd = even ? binaryOp(e, "*", *odd, *scale, loc) : std::nullopt;
    if (!odd)
      return std::nullopt;
  }
  return std::make_pair(*even, *odd);
}

std::optional<FValue> dotScaled(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {
      "lhs", "lhs_scale", "lhs_format", "rhs",        "rhs_scale", "rhs_format",
      "acc", "fast_math", "lhs_k_pack", "rhs_k_pack", "out_dtype"};
  ArgReader r(e, args, kName, kParams);
  if (!r.isOk())
    return std::nullopt;
  auto readFlag = [&](size_t i, bool dflt) -> std::optional<bool> {
    const FValue *v = r.get(i);
    if (!v)
      return dflt;
    if (!v->isNumber() && v->kind != FValue::Kind::Bool) {
      r.bad(i, "a compile-time bool");
      return std::nullopt;
    }
    return v->intValue != 0;
  };
  std::optional<bool> fastMath = readFlag(7, false);
  if (!fastMath)
    return std::nullopt;
  ScaledOperand ops[2];
  for (int side = 0; side < 2; ++side) {
    size_t valueArg = side * 3, scaleArg = valueArg + 1,
           formatArg = valueArg + 2;
    ScaledOperand &op = ops[side];
    op.isLhs = side == 0;
    const FValue *format = r.get(formatArg);
    if (!format)
      return r.missing(formatArg);
    if (format->kind != FValue::Kind::String)
      return r.bad(formatArg, "a format string");
    op.format = format->text;
    std::optional<FormatTypes> types = formatTypes(op.format);
    if (!types)
      return r.bad(formatArg,
                   "one of \"e2m1\", \"e4m3\", \"e5m2\", \"bf16\", \"fp16\"");
    const FValue *value = r.get(valueArg);
    if (!value)
      return r.missing(valueArg);
    if (!value->isRuntime() || value->type.isPointer || !value->type.isBlock())
      return r.bad(valueArg, "a 2-D block");
    if (value->type.shape.size() != 2)
      return e.error(r.loc(valueArg),
                     kName +
                         ": batched (3-D) operands are not supported by "
                         "Kiln yet, got shape " +
                         formatShape(value->type.shape));
    ScalarKind kind = value->type.element.getKind();
    if (kind != types->decoded && kind != types->storage)
      return r.bad(
          valueArg,
          "a block of " + DType(types->decoded).getLanguageName() +
              (types->decoded == types->storage
                   ? std::string(" (two e2m1 values per byte)")
                   : " or " + DType(types->storage).getLanguageName()) +
              " for format \"" + op.format + "\"");
    op.value = *value;
    std::optional<bool> kPack = readFlag(8 + side, true);
    if (!kPack)
      return std::nullopt;
    if (!*kPack && op.format != "e2m1")
      return r.bad(8 + side, "True for format \"" + op.format +
                                 "\" (only e2m1 packs along M or N)");
    op.kPack = *kPack;
    if (const FValue *scale = r.get(scaleArg)) {
      if (!scale->isRuntime() || scale->type.isPointer ||
          scale->type.shape.size() != 2)
        return r.bad(scaleArg, "a 2-D block of uint8 (e8m0) scales or None");
      if (scale->type.element.getKind() != ScalarKind::U8)
        return e.error(r.loc(scaleArg),
                       kName + ": " + scale->type.element.getLanguageName() +
                           " scales are not supported by Kiln (only uint8 "
                           "e8m0 scales, one per 32 elements of K; fp8 "
                           "scales need an sm_100 GPU)");
      op.scale = *scale;
    }
  }
  // Logical sizes: e2m1 doubles its packed dimension.
  auto logical = [](const ScaledOperand &op) {
    llvm::SmallVector<int64_t> shape(op.value.type.shape);
    if (op.format == "e2m1")
      shape[op.kPack == op.isLhs ? 1 : 0] *= 2;
    return shape;
  };
  llvm::SmallVector<int64_t> lhsShape = logical(ops[0]),
                             rhsShape = logical(ops[1]);
  int64_t m = lhsShape[0], k = lhsShape[1], n = rhsShape[1];
  if (rhsShape[0] != k)
    return e.error(args.loc, kName + ": lhs has K=" + std::to_string(k) +
                                 " and rhs K=" + std::to_string(rhsShape[0]) +
                                 " (e2m1 operands count two values per byte)");
  for (int side = 0; side < 2; ++side) {
    const ScaledOperand &op = ops[side];
    if (!op.scale)
      continue;
    int64_t rows = side == 0 ? m : n;
    llvm::SmallVector<int64_t> want{rows, k / kGroup};
    if (k % kGroup != 0 ||
        llvm::ArrayRef<int64_t>(op.scale->type.shape) != llvm::ArrayRef(want))
      return e.error(r.loc(side * 3 + 1),
                     kName + ": " + (side == 0 ? "lhs" : "rhs") +
                         "_scale must have shape [" + std::to_string(rows) +
                         ", " + std::to_string(k / kGroup) +
                         "] (one scale per 32 of K=" + std::to_string(k) +
                         "), got " + formatShape(op.scale->type.shape));
  }
  if (const FValue *o = r.get(10)) {
    if (o->kind != FValue::Kind::DType || o->type.isPointer ||
        o->type.element.getKind() != ScalarKind::F32)
      return r.bad(10, "tl.float32 (the only out_dtype of tl.dot_scaled)");
  }
  ScalarKind computeType = ops[0].format == "fp16" || ops[1].format == "fp16"
                               ? ScalarKind::F16
                               : ScalarKind::BF16;
  std::optional<FValue> acc;
  if (const FValue *c = r.get(6)) {
    TritonType want{DType(ScalarKind::F32), false, {m, n}};
    if (!c->isRuntime() || c->type.isPointer || c->type != want)
      return r.bad(6,
                   "a block of type " + want.str() + " (the product's type)");
    acc = *c;
  }
  // A K-packed e2m1 operand: interleaving its nibbles along K costs
  // register shuffles (and spills) that two dots over the even and the odd
  // elements of K avoid; the sum is the same up to the order of fp32 adds.
  bool packedK = (ops[0].format == "e2m1" && ops[0].kPack) ||
                 (ops[1].format == "e2m1" && ops[1].kPack);
  if (packedK && k / 2 >= 16) {
    auto a = upcastHalves(e, ops[0], computeType, *fastMath, args.loc);
    auto b = a ? upcastHalves(e, ops[1], computeType, *fastMath, args.loc)
               : std::nullopt;
    if (!b)
      return std::nullopt;
    std::vector<FValue> first{a->first, b->first};
    if (acc)
      first.push_back(*acc);
    std::optional<FValue> partial =
        callBuiltin(e, "tl.dot", std::move(first), {}, args.loc);
    if (!partial)
      return std::nullopt;
    return callBuiltin(e, "tl.dot", {a->second, b->second, *partial}, {},
                       args.loc);
  }
  std::optional<FValue> a = upcast(e, ops[0], computeType, *fastMath, args.loc);
  std::optional<FValue> b =
      a ? upcast(e, ops[1], computeType, *fastMath, args.loc) : std::nullopt;
  if (!b)
    return std::nullopt;
  std::vector<FValue> positional{*a, *b};
  if (acc)
    positional.push_back(*acc);
  return callBuiltin(e, "tl.dot", std::move(positional), {}, args.loc);
}

} // namespace

void kiln::frontend::addScaledDotBuiltins(BuiltinTable &table) {
  table["tl.dot_scaled"] = dotScaled;
}
