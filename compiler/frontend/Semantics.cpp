//===- Semantics.cpp - Triton's typing rules for operators ----------------===//
//
// Type promotion, broadcasting and the operators of the Triton language:
// the rules upstream Triton implements in its `semantic.py`, written for
// Kiln's staged values. Compile-time operands fold with Python semantics;
// run-time operands follow Triton's (C-style `//` and `%` on signed ints,
// python scalars weakly typed next to typed values).
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Materialization, broadcasting and casts
//===----------------------------------------------------------------------===//

static constexpr __int128 kMinInt128 =
    -__int128((~(unsigned __int128)0) >> 1) - 1;

/// A compile-time integer that becomes a value must be an int64 or uint64,
/// as upstream types python ints: [-2**63, 2**64).
static bool checkIntRange(Emitter &e, const FValue &number, SMLoc loc) {
  if (number.kind != FValue::Kind::Int ||
      (number.intValue >= INT64_MIN && number.intValue <= UINT64_MAX))
    return true;
  return e.error(loc, "the integer " + intText(number.intValue) +
                          " does not fit int64 or uint64 (as in Triton: "
                          "[-2**63, 2**64))"),
         false;
}

FValue Emitter::constant(const FValue &number, const TritonType &type,
                         SMLoc loc) {
  mlir::Type elementType = type.element.toMLIR(&context);
  mlir::TypedAttr scalarAttr;
  if (type.element.isFloat()) {
    double v = number.kind == FValue::Kind::Float ? number.floatValue
                                                  : double(number.intValue);
    scalarAttr = builder.getFloatAttr(elementType, v);
  } else {
    int64_t v = number.kind == FValue::Kind::Float ? int64_t(number.floatValue)
                                                   : number.intValue;
    unsigned width = type.element.getBitWidth();
    scalarAttr = builder.getIntegerAttr(
        elementType, llvm::APInt(width, uint64_t(v), /*isSigned=*/true,
                                 /*implicitTrunc=*/true));
  }
  mlir::TypedAttr attr = scalarAttr;
  if (type.isBlock())
    attr = mlir::DenseElementsAttr::get(
        mlir::RankedTensorType::get(type.shape, elementType), scalarAttr);
  mlir::Value v = mlir::arith::ConstantOp::create(builder, location(loc), attr);
  return FValue::runtime(v, type);
}

std::optional<FValue> Emitter::materialize(const FValue &v, SMLoc loc) {
  switch (v.kind) {
  case FValue::Kind::Runtime:
    return v;
  case FValue::Kind::Bool:
    return constant(v, TritonType{DType(ScalarKind::I1), false, {}}, loc);
  case FValue::Kind::Int: {
    if (!checkIntRange(*this, v, loc))
      return std::nullopt;
    bool fits32 = v.intValue >= INT32_MIN && v.intValue <= INT32_MAX;
    ScalarKind kind = fits32                   ? ScalarKind::I32
                      : v.intValue > INT64_MAX ? ScalarKind::U64
                                               : ScalarKind::I64;
    return constant(v, TritonType{DType(kind), false, {}}, loc);
  }
  case FValue::Kind::Float:
    return constant(v, TritonType{DType(ScalarKind::F32), false, {}}, loc);
  default:
    return error(loc, "expected a number or a tensor, got " + v.describe());
  }
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + "]";
}

std::optional<llvm::SmallVector<int64_t>>
Emitter::broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                         SMLoc loc) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dimensions align from the right; missing leading ones count as 1.
    int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1) {
      error(loc, "cannot broadcast shapes " + shapeString(a) + " and " +
                     shapeString(b) + ": dimension " + std::to_string(i) +
                     " has sizes " + std::to_string(x) + " and " +
                     std::to_string(y) + " (only size-1 dimensions broadcast)");
      return std::nullopt;
    }
    result[i] = x == 1 ? y : x;
  }
  return result;
}

std::optional<FValue> Emitter::broadcastTo(const FValue &v,
                                           llvm::ArrayRef<int64_t> shape,
                                           SMLoc loc) {
  if (llvm::ArrayRef<int64_t>(v.type.shape) == shape)
    return v;
  if (v.type.isBlockPointer())
    return error(loc, "a block pointer (" + v.type.str() +
                          ") cannot be broadcast to a block");
  if (!v.type.isBlock()) {
    TritonType type = v.type.withShape(shape);
    mlir::Value splat = kiln::SplatOp::create(builder, location(loc),
                                              type.toMLIR(&context), v.value);
    return FValue::runtime(splat, type);
  }
  llvm::ArrayRef<int64_t> from = v.type.shape;
  auto fail = [&](const llvm::Twine &why) {
    return error(loc, "cannot broadcast a block of shape " + shapeString(from) +
                          " to shape " + shapeString(shape) + ": " + why);
  };
  if (from.size() > shape.size())
    return fail("it has more dimensions");
  size_t lead = shape.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != shape[lead + i] && from[i] != 1)
      return fail("dimension " + std::to_string(lead + i) + " has size " +
                  std::to_string(from[i]) + " where " +
                  std::to_string(shape[lead + i]) +
                  " is needed (only size-1 dimensions broadcast)");
  mlir::Location l = location(loc);
  FValue cur = v;
  // Leading dimensions first (as kiln.expand_dims at 0), then repeat.
  for (size_t i = 0; i < lead; ++i) {
    llvm::SmallVector<int64_t> expanded(cur.type.shape);
    expanded.insert(expanded.begin(), 1);
    TritonType type = cur.type.withShape(expanded);
    cur = FValue::runtime(kiln::ExpandDimsOp::create(
                              builder, l, type.toMLIR(&context), cur.value, 0),
                          type);
  }
  if (llvm::ArrayRef<int64_t>(cur.type.shape) == shape)
    return cur;
  TritonType type = cur.type.withShape(shape);
  return FValue::runtime(
      kiln::BroadcastOp::create(builder, l, type.toMLIR(&context), cur.value),
      type);
}

FValue Emitter::castTo(const FValue &v, DType dst, SMLoc loc) {
  DType src = v.type.element;
  if (src == dst || v.type.isPointer)
    return v;
  // fp8e4b15 converts only to and from fp16 and fp32 (upstream's
  // conversions); other types go through them, both exact on the way out.
  auto isF16OrF32 = [](DType d) {
    return d.getKind() == ScalarKind::F16 || d.getKind() == ScalarKind::F32;
  };
  if (src.getKind() == ScalarKind::F8E4B15 && !isF16OrF32(dst) &&
      dst.getKind() != ScalarKind::BF16)
    return castTo(castTo(v, DType(ScalarKind::F32), loc), dst, loc);
  if (dst.getKind() == ScalarKind::F8E4B15 && !isF16OrF32(src))
    return castTo(castTo(v, DType(ScalarKind::F32), loc), dst, loc);
  TritonType resultType = v.type;
  resultType.element = dst;
  mlir::Type type = resultType.toMLIR(&context);
  mlir::Location l = location(loc);
  mlir::Value in = v.value, out;
  if (src.isInteger() && dst.isInteger()) {
    if (dst.isBool()) {
      FValue zero = constant(FValue::integer(0), v.type, loc);
      out = mlir::arith::CmpIOp::create(
          builder, l, mlir::arith::CmpIPredicate::ne, in, zero.value);
    } else if (dst.getBitWidth() > src.getBitWidth()) {
      out =
          src.isSignedInteger()
              ? mlir::Value(mlir::arith::ExtSIOp::create(builder, l, type, in))
              : mlir::Value(mlir::arith::ExtUIOp::create(builder, l, type, in));
    } else if (dst.getBitWidth() < src.getBitWidth()) {
      out = mlir::arith::TruncIOp::create(builder, l, type, in);
    } else {
      out = in; // same width, other signedness: same bits
    }
  } else if (src.isInteger()) {
    out =
        src.isSignedInteger()
            ? mlir::Value(mlir::arith::SIToFPOp::create(builder, l, type, in))
            : mlir::Value(mlir::arith::UIToFPOp::create(builder, l, type, in));
  } else if (dst.isInteger()) {
    if (dst.isBool()) {
      FValue zero = constant(FValue::floating(0), v.type, loc);
      out = mlir::arith::CmpFOp::create(
          builder, l, mlir::arith::CmpFPredicate::UNE, in, zero.value);
    } else {
      out =
          dst.isSigned()
              ? mlir::Value(mlir::arith::FPToSIOp::create(builder, l, type, in))
              : mlir::Value(
                    mlir::arith::FPToUIOp::create(builder, l, type, in));
    }
  } else if (dst.getBitWidth() > src.getBitWidth() ||
             (dst.getBitWidth() == src.getBitWidth() &&
              dst.getKind() == ScalarKind::F32)) {
    out = mlir::arith::ExtFOp::create(builder, l, type, in);
  } else if (dst.getBitWidth() < src.getBitWidth()) {
    out = mlir::arith::TruncFOp::create(builder, l, type, in);
  } else {
    // fp16 <-> bf16, fp8e4nv <-> fp8e5: through fp32.
    FValue wide = castTo(v, DType(ScalarKind::F32), loc);
    return castTo(wide, dst, loc);
  }
  return FValue::runtime(out, resultType);
}

std::optional<FValue> Emitter::bitcastTo(const FValue &v,
                                         const TritonType &type, SMLoc loc) {
  if (v.type.isBlockPointer() || type.isBlockPointer())
    return error(loc, "block pointers cannot be bitcast");
  TritonType result = type.withShape(v.type.shape);
  mlir::Type resultType = result.toMLIR(&context);
  mlir::Location l = location(loc);
  // Pointers: reinterpreted as pointers to another type, or as (and from)
  // their 64-bit addresses, as Triton's cast does.
  if (v.type.isPointer && type.isPointer)
    return FValue::runtime(
        kiln::PtrCastOp::create(builder, l, resultType, v.value), result);
  if (v.type.isPointer || type.isPointer) {
    DType number = v.type.isPointer ? type.element : v.type.element;
    if (!number.isInteger() || number.getBitWidth() != 64)
      return error(loc, "cannot convert " + v.type.str() + " to " + type.str() +
                            ": pointers convert only to and from int64 or "
                            "uint64");
    mlir::Value out = v.type.isPointer ? mlir::Value(kiln::PtrToIntOp::create(
                                             builder, l, resultType, v.value))
                                       : mlir::Value(kiln::IntToPtrOp::create(
                                             builder, l, resultType, v.value));
    return FValue::runtime(out, result);
  }
  unsigned srcBits = v.type.element.getBitWidth();
  unsigned dstBits = type.element.getBitWidth();
  if (srcBits != dstBits)
    return error(loc, "cannot bitcast " + v.type.str() + " to " +
                          type.scalar().str() + ": the bit widths differ (" +
                          std::to_string(srcBits) + " and " +
                          std::to_string(dstBits) + ")");
  // Same MLIR type (int32 and uint32 are both i32): only the Triton type
  // changes.
  if (v.type.element.toMLIR(&context) == type.element.toMLIR(&context))
    return FValue::runtime(v.value, result);
  mlir::Value out =
      mlir::arith::BitcastOp::create(builder, l, resultType, v.value);
  return FValue::runtime(out, result);
}

//===----------------------------------------------------------------------===//
// Promotion
//===----------------------------------------------------------------------===//

/// The type two typed operands are converted to before an arithmetic op.
/// Floats follow upstream's precedence, not width: fp64, then fp32, then fp16
/// (so fp16 with bf16 is fp16), then bf16 only with bf16 (bf16 with an
/// integer or an fp8 is fp32), then two different fp8 kinds give fp16.
static DType promote(DType a, DType b) {
  if (a == b)
    return a;
  if (a.isFloat() || b.isFloat()) {
    auto either = [&](ScalarKind kind) {
      return a.getKind() == kind || b.getKind() == kind;
    };
    for (ScalarKind kind : {ScalarKind::F64, ScalarKind::F32, ScalarKind::F16})
      if (either(kind))
        return DType(kind);
    if (either(ScalarKind::BF16))
      return DType(ScalarKind::F32);
    if (a.isFloat() && b.isFloat()) // the two fp8 kinds
      return DType(ScalarKind::F16);
    return a.isFloat() ? a : b; // fp8 with an integer: refused by the caller
  }
  if (a.isBool())
    return b;
  if (b.isBool())
    return a;
  if (a.isSigned() == b.isSigned())
    return a.getBitWidth() >= b.getBitWidth() ? a : b;
  DType u = a.isUnsigned() ? a : b, s = a.isUnsigned() ? b : a;
  return u.getBitWidth() >= s.getBitWidth() ? u : s;
}

/// The kind order upstream types python numbers by: bool < integer < float.
static int kindRank(DType type) {
  return type.isBool() ? 0 : type.isInteger() ? 1 : 2;
}

/// The type of an operation between a python number and a typed operand of
/// dtype `other`. Python numbers are weakly typed, as upstream types them:
/// a number whose kind is not above the operand's takes the operand's type
/// (`x_i8 + 1` is int8, `x_fp16 * 0.5` fp16); one of a higher kind promotes
/// its own type (strongType) with the operand's (`x_i32 * 0.5` fp32,
/// `x_i32 * 1e-300` fp64, `x_bool + 1` int32). Whether the number fits the
/// result is checkWeakNumber's question.
static DType weakType(const FValue &number, DType other) {
  DType own = strongType(number);
  if (kindRank(own) <= kindRank(other))
    return other;
  return promote(own, other);
}

/// Upstream's errors for a python integer that the weakly typed result of
/// an operation cannot hold: `x_i8 + 300`, `x_i32 + 2**40`, and any negative
/// number beside an unsigned (or bool) operand.
static bool checkWeakNumber(Emitter &e, const FValue &number, DType type,
                            SMLoc loc) {
  if (number.kind != FValue::Kind::Int || !type.isInteger())
    return true;
  __int128 value = number.intValue;
  bool isUnsigned = type.isUnsigned() || type.isBool();
  if (isUnsigned && value < 0)
    return e.error(loc, "cannot combine " + type.getShortName() +
                            " with the negative number " + intText(value) +
                            " (as in Triton); cast one of them with .to()"),
           false;
  if (!checkIntRange(e, number, loc))
    return false;
  unsigned bits = type.isBool() ? 1 : type.getBitWidth();
  if (bits >= 64 && !isUnsigned && value > INT64_MAX)
    return e.error(loc, "the number " + intText(value) +
                            " is out of range for " + type.getShortName() +
                            " (as in Triton); cast the other operand to "
                            "uint64 with .to() first"),
           false;
  if (bits >= 64)
    return true;
  int64_t max =
      isUnsigned ? (int64_t(1) << bits) - 1 : (int64_t(1) << (bits - 1)) - 1;
  int64_t min = isUnsigned ? 0 : -(int64_t(1) << (bits - 1));
  if (value < min || value > max)
    return e.error(loc, "the number " + intText(value) +
                            " is out of range for " + type.getShortName() +
                            " (as in Triton: [" + std::to_string(min) + ", " +
                            std::to_string(max) +
                            "]); cast the other operand with .to() first"),
           false;
  return true;
}

/// The type a python number takes where upstream makes it a tensor before
/// typing the operation (comparisons, tl.maximum/minimum/clamp, tl.fma,
/// ...): int32 (uint32, int64 when it does not fit), fp32 (fp64 for a
/// magnitude outside fp32's normal range, other than 0), int1; not weak.
DType kiln::frontend::strongType(const FValue &number) {
  if (number.kind == FValue::Kind::Bool)
    return DType(ScalarKind::I1);
  if (number.kind == FValue::Kind::Float) {
    double m = std::fabs(number.floatValue);
    bool fp32 =
        m == 0.0 || std::isinf(m) || std::isnan(m) ||
        (m >= 0x1p-126 && m <= double(std::numeric_limits<float>::max()));
    return DType(fp32 ? ScalarKind::F32 : ScalarKind::F64);
  }
  if (number.intValue >= INT32_MIN && number.intValue <= INT32_MAX)
    return DType(ScalarKind::I32);
  if (number.intValue > INT32_MAX && number.intValue <= UINT32_MAX)
    return DType(ScalarKind::U32);
  if (number.intValue > INT64_MAX) // up to 2**64 - 1: checkIntRange's
    return DType(ScalarKind::U64);
  return DType(ScalarKind::I64);
}

FValue Emitter::numberAsOwnType(const FValue &number, const FValue &other,
                                SMLoc loc) {
  bool numeric = other.isRuntime() && !other.type.isPointer &&
                 !other.type.isBlockPointer() &&
                 !other.type.isTensorDescriptor();
  if (!numeric || !number.isNumber())
    return number;
  return constant(number, TritonType{strongType(number), false, {}}, loc);
}

//===----------------------------------------------------------------------===//
// Compile-time folding
//===----------------------------------------------------------------------===//

static __int128 floorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

static std::optional<FValue> foldNumbers(Emitter &emitter, StringRef op,
                                         const FValue &lhs, const FValue &rhs,
                                         SMLoc loc) {
  bool isFloat =
      lhs.kind == FValue::Kind::Float || rhs.kind == FValue::Kind::Float;
  double x =
      lhs.kind == FValue::Kind::Float ? lhs.floatValue : double(lhs.intValue);
  double y =
      rhs.kind == FValue::Kind::Float ? rhs.floatValue : double(rhs.intValue);
  __int128 a = lhs.intValue, b = rhs.intValue;
  auto overflow = [&] {
    return emitter.error(loc, "integer overflow in a compile-time expression "
                              "(compile-time integers are 128-bit)");
  };
  if (op == "<")
    return FValue::boolean(isFloat ? x < y : a < b);
  if (op == "<=")
    return FValue::boolean(isFloat ? x <= y : a <= b);
  if (op == ">")
    return FValue::boolean(isFloat ? x > y : a > b);
  if (op == ">=")
    return FValue::boolean(isFloat ? x >= y : a >= b);
  if (op == "==")
    return FValue::boolean(isFloat ? x == y : a == b);
  if (op == "!=")
    return FValue::boolean(isFloat ? x != y : a != b);
  if (op == "/") {
    if (y == 0)
      return emitter.error(loc,
                           "division by zero in a compile-time expression");
    return FValue::floating(x / y);
  }
  if (op == "**") {
    if (!isFloat && b >= 0) {
      // Square and multiply, checked: Python's integers are unbounded, ours
      // are 128-bit.
      __int128 r = 1, base = a;
      for (__int128 e = b; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(r, base, &r))
          return overflow();
        if (e > 1 && __builtin_mul_overflow(base, base, &base))
          return overflow();
      }
      return FValue::integer(r);
    }
    return FValue::floating(std::pow(x, y));
  }
  if (isFloat) {
    if (op == "+")
      return FValue::floating(x + y);
    if (op == "-")
      return FValue::floating(x - y);
    if (op == "*")
      return FValue::floating(x * y);
    if (op == "//") {
      if (y == 0)
        return emitter.error(loc,
                             "division by zero in a compile-time expression");
      return FValue::floating(std::floor(x / y));
    }
    if (op == "%") {
      if (y == 0)
        return emitter.error(loc,
                             "division by zero in a compile-time expression");
      double r = std::fmod(x, y);
      return FValue::floating(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
    }
    return emitter.error(loc, "operator '" + op + "' is not defined on floats");
  }
  bool bothBool =
      lhs.kind == FValue::Kind::Bool && rhs.kind == FValue::Kind::Bool;
  auto result = [&](__int128 v) {
    return bothBool ? FValue::boolean(v != 0) : FValue::integer(v);
  };
  if (op == "+" || op == "-" || op == "*") {
    __int128 r;
    bool overflowed = op == "+"   ? __builtin_add_overflow(a, b, &r)
                      : op == "-" ? __builtin_sub_overflow(a, b, &r)
                                  : __builtin_mul_overflow(a, b, &r);
    if (overflowed)
      return overflow();
    return FValue::integer(r);
  }
  if (op == "//" || op == "%") {
    if (b == 0)
      return emitter.error(loc,
                           "division by zero in a compile-time expression");
    if (a == kMinInt128 && b == -1)
      return overflow();
    __int128 q = floorDiv(a, b);
    return FValue::integer(op == "//" ? q : a - q * b); // Python semantics
  }
  if (op == "&")
    return result(a & b);
  if (op == "|")
    return result(a | b);
  if (op == "^")
    return result(a ^ b);
  if (op == "<<" || op == ">>") {
    if (b < 0)
      return emitter.error(loc, "negative shift count in a compile-time "
                                "expression");
    if (op == ">>")
      return FValue::integer(b >= 128 ? (a < 0 ? -1 : 0) : a >> int(b));
    if (a == 0)
      return FValue::integer(0);
    // Shifting left must keep every bit, sign included.
    __int128 shifted = b >= 128 ? 0 : __int128((unsigned __int128)a << int(b));
    if (b >= 128 || (shifted >> int(b)) != a)
      return overflow();
    return FValue::integer(shifted);
  }
  return emitter.error(loc, "operator '" + op + "' is not supported here");
}

//===----------------------------------------------------------------------===//
// Binary operators
//===----------------------------------------------------------------------===//

bool kiln::frontend::isComparison(StringRef op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" ||
         op == "!=";
}

std::optional<FValue> Emitter::binary(StringRef op, const FValue &lhs,
                                      const FValue &rhs, SMLoc loc) {
  // Identity and equality of compile-time objects.
  if (op == "is" || op == "is not") {
    bool same;
    if (lhs.isNone() || rhs.isNone())
      same = lhs.isNone() && rhs.isNone();
    else if (lhs.kind == FValue::Kind::DType && rhs.kind == FValue::Kind::DType)
      same = lhs.type == rhs.type;
    else if (lhs.isRuntime() || rhs.isRuntime())
      return error(loc, "'" + op + "' needs compile-time operands");
    else
      same = lhs.kind == rhs.kind && lhs.intValue == rhs.intValue &&
             lhs.text == rhs.text;
    return FValue::boolean(op == "is" ? same : !same);
  }
  if ((op == "==" || op == "!=") && !lhs.isRuntime() && !rhs.isRuntime() &&
      !(lhs.isNumber() && rhs.isNumber())) {
    bool same = lhs.kind == rhs.kind && lhs.text == rhs.text &&
                (lhs.kind != FValue::Kind::DType || lhs.type == rhs.type);
    return FValue::boolean(op == "==" ? same : !same);
  }
  // Compile-time strings: concatenation, repetition and ordering, as
  // Python's (upstream's constexprs forward them to their values).
  if (lhs.kind == FValue::Kind::String && rhs.kind == FValue::Kind::String) {
    if (op == "+")
      return FValue::string(lhs.text + rhs.text);
    int order = StringRef(lhs.text).compare(rhs.text);
    if (op == "<")
      return FValue::boolean(order < 0);
    if (op == "<=")
      return FValue::boolean(order <= 0);
    if (op == ">")
      return FValue::boolean(order > 0);
    if (op == ">=")
      return FValue::boolean(order >= 0);
  }
  if (op == "*" && lhs.kind == FValue::Kind::String && rhs.isInt()) {
    if (rhs.intValue > 0 &&
        uint64_t(rhs.intValue) * lhs.text.size() > (uint64_t(1) << 20))
      return error(loc, "a string repeated " + intText(rhs.intValue) +
                            " times is too long for a kernel");
    std::string out;
    for (int64_t i = 0; i < rhs.intValue; ++i)
      out += lhs.text;
    return FValue::string(out);
  }
  if (op == "+" && lhs.kind == FValue::Kind::Tuple &&
      rhs.kind == FValue::Kind::Tuple) {
    std::vector<FValue> elements = lhs.elements;
    elements.insert(elements.end(), rhs.elements.begin(), rhs.elements.end());
    return FValue::tuple(std::move(elements));
  }
  // `[2] * n`: a list or tuple repeated (upstream's tuple has no __rmul__,
  // so `n * [2]` stays an error, as there).
  if (op == "*" && lhs.kind == FValue::Kind::Tuple && rhs.isInt()) {
    if (rhs.intValue > 0 &&
        uint64_t(rhs.intValue) * lhs.elements.size() > (uint64_t(1) << 20))
      return error(loc, "a tuple of " + std::to_string(lhs.elements.size()) +
                            " repeated " + intText(rhs.intValue) +
                            " times is too long for a kernel");
    std::vector<FValue> elements;
    for (int64_t i = 0; i < rhs.intValue; ++i)
      elements.insert(elements.end(), lhs.elements.begin(), lhs.elements.end());
    return FValue::tuple(std::move(elements));
  }
  if (lhs.isNumber() && rhs.isNumber()) {
    std::optional<FValue> folded = foldNumbers(*this, op, lhs, rhs, loc);
    if (folded && folded->isNumber() && (lhs.typed || rhs.typed))
      folded->typed = true;
    return folded;
  }
  // A typed number (FValue::typed) beside a value is a scalar of its own
  // type, as upstream's tensor: `s = 0.5; x_fp16 * s` computes in fp32.
  if (lhs.typed || rhs.typed) {
    FValue a = lhs.typed ? numberAsOwnType(lhs, rhs, loc) : lhs;
    FValue b = rhs.typed ? numberAsOwnType(rhs, lhs, loc) : rhs;
    if (a.isRuntime() != lhs.isRuntime() || b.isRuntime() != rhs.isRuntime())
      return binary(op, a, b, loc);
  }
  if (!(lhs.isRuntime() || lhs.isNumber()) ||
      !(rhs.isRuntime() || rhs.isNumber()))
    return error(loc, "operator '" + op + "' cannot combine " + lhs.describe() +
                          " and " + rhs.describe());
  if (op == "@")
    return error(loc, "'@' is not supported; use tl.dot");
  if (op == "**")
    return error(loc, "'**' on run-time values is not supported; use "
                      "libdevice.pow");

  for (const FValue *v : {&lhs, &rhs})
    if (v->isRuntime() && v->type.isBlockPointer())
      return error(loc, "operator '" + op +
                            "' is not defined on block "
                            "pointers; move them with tl.advance");

  // The result shape: numpy broadcasting of the operands' shapes.
  llvm::SmallVector<int64_t> shape;
  if (lhs.isRuntime())
    shape = lhs.type.shape;
  if (rhs.isRuntime()) {
    auto common = broadcastShapes(shape, rhs.type.shape, loc);
    if (!common)
      return std::nullopt;
    shape = *common;
  }
  mlir::Location l = location(loc);

  // Pointer arithmetic.
  bool lhsPtr = lhs.isRuntime() && lhs.type.isPointer;
  bool rhsPtr = rhs.isRuntime() && rhs.type.isPointer;
  if (lhsPtr || rhsPtr) {
    const FValue &ptr = lhsPtr ? lhs : rhs;
    const FValue &offset = lhsPtr ? rhs : lhs;
    if (lhsPtr && rhsPtr)
      return error(loc, "operator '" + op + "' cannot combine two pointers");
    if (!(op == "+" || (op == "-" && lhsPtr)))
      return error(loc, "operator '" + op +
                            "' is not defined on pointers; "
                            "only pointer + int and pointer - int are");
    std::optional<FValue> off = materialize(offset, loc);
    if (!off)
      return std::nullopt;
    if (!off->type.element.isInteger() || off->type.isPointer)
      return error(loc, "a pointer offset must be an integer, got " +
                            off->describe());
    // A boolean offset is 0 or 1, as upstream adds it.
    if (off->type.element.isBool())
      off = castTo(*off, DType(ScalarKind::I32), loc);
    // Offsets are signed: zero-extend narrower unsigned ones (as Triton).
    if (off->type.element.isUnsigned() && off->type.element.getBitWidth() < 64)
      off = castTo(*off, DType(ScalarKind::I64), loc);
    if (op == "-") {
      FValue zero = constant(FValue::integer(0), off->type, loc);
      off = FValue::runtime(
          mlir::arith::SubIOp::create(builder, l, zero.value, off->value),
          off->type);
    }
    std::optional<FValue> p = broadcastTo(ptr, shape, loc);
    off = off ? broadcastTo(*off, shape, loc) : std::nullopt;
    if (!p || !off)
      return std::nullopt;
    mlir::Value result = kiln::AddPtrOp::create(builder, l, p->value.getType(),
                                                p->value, off->value);
    return FValue::runtime(result, p->type);
  }

  // The computation type, with python numbers weakly typed.
  DType computeType;
  FValue a = lhs, b = rhs;
  if (!lhs.isRuntime() || !rhs.isRuntime()) {
    const FValue &number = lhs.isRuntime() ? rhs : lhs;
    computeType = weakType(number, (lhs.isRuntime() ? lhs : rhs).type.element);
    if (!checkWeakNumber(*this, number, computeType, loc))
      return std::nullopt;
  } else {
    DType l = lhs.type.element, r = rhs.type.element;
    if ((l.isFp8() && r.isInteger()) || (r.isFp8() && l.isInteger()))
      return error(loc, "operator '" + op + "' cannot combine " +
                            l.getShortName() + " and " + r.getShortName() +
                            " (as in Triton); convert one with .to()");
    computeType = promote(l, r);
  }
  if (op == "/" && computeType.isInteger())
    computeType = DType(ScalarKind::F32);
  // PTX has no fp16/bf16 division or remainder: Triton computes them in fp32.
  if ((op == "/" || op == "%") && (computeType.getKind() == ScalarKind::F16 ||
                                   computeType.getKind() == ScalarKind::BF16))
    computeType = DType(ScalarKind::F32);
  if ((op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") &&
      computeType.isFloat())
    return error(loc, "operator '" + op + "' needs integer operands, got " +
                          (lhs.isRuntime() ? lhs.type.str() : lhs.describe()) +
                          " and " +
                          (rhs.isRuntime() ? rhs.type.str() : rhs.describe()));
  if (op == "//" && computeType.isFloat())
    return error(loc, "'//' on floating-point values is not supported");

  TritonType operandType{computeType, false, shape};
  auto prepare = [&](const FValue &v) -> std::optional<FValue> {
    if (!v.isRuntime())
      return constant(v, operandType, loc);
    FValue cast = castTo(v, computeType, loc);
    return broadcastTo(cast, shape, loc);
  };
  std::optional<FValue> x = prepare(a);
  std::optional<FValue> y = x ? prepare(b) : std::nullopt;
  if (!y)
    return std::nullopt;
  mlir::Value u = x->value, v = y->value, result;
  bool isFloat = computeType.isFloat();
  bool isUnsigned = computeType.isUnsigned() || computeType.isBool();
  namespace arith = mlir::arith;

  if (isComparison(op)) {
    if (isFloat) {
      arith::CmpFPredicate pred = op == "<"    ? arith::CmpFPredicate::OLT
                                  : op == "<=" ? arith::CmpFPredicate::OLE
                                  : op == ">"  ? arith::CmpFPredicate::OGT
                                  : op == ">=" ? arith::CmpFPredicate::OGE
                                  : op == "==" ? arith::CmpFPredicate::OEQ
                                               : arith::CmpFPredicate::UNE;
      result = arith::CmpFOp::create(builder, l, pred, u, v);
    } else {
      arith::CmpIPredicate pred =
          op == "<"    ? (isUnsigned ? arith::CmpIPredicate::ult
                                     : arith::CmpIPredicate::slt)
          : op == "<=" ? (isUnsigned ? arith::CmpIPredicate::ule
                                     : arith::CmpIPredicate::sle)
          : op == ">"  ? (isUnsigned ? arith::CmpIPredicate::ugt
                                     : arith::CmpIPredicate::sgt)
          : op == ">=" ? (isUnsigned ? arith::CmpIPredicate::uge
                                     : arith::CmpIPredicate::sge)
          : op == "==" ? arith::CmpIPredicate::eq
                       : arith::CmpIPredicate::ne;
      result = arith::CmpIOp::create(builder, l, pred, u, v);
    }
    return FValue::runtime(result,
                           TritonType{DType(ScalarKind::I1), false, shape});
  }

  if (op == "+")
    result = isFloat ? mlir::Value(arith::AddFOp::create(builder, l, u, v))
                     : mlir::Value(arith::AddIOp::create(builder, l, u, v));
  else if (op == "-")
    result = isFloat ? mlir::Value(arith::SubFOp::create(builder, l, u, v))
                     : mlir::Value(arith::SubIOp::create(builder, l, u, v));
  else if (op == "*")
    result = isFloat ? mlir::Value(arith::MulFOp::create(builder, l, u, v))
                     : mlir::Value(arith::MulIOp::create(builder, l, u, v));
  else if (op == "/")
    result = arith::DivFOp::create(builder, l, u, v);
  else if (op == "//") // C semantics: truncation toward zero
    result = isUnsigned ? mlir::Value(arith::DivUIOp::create(builder, l, u, v))
                        : mlir::Value(arith::DivSIOp::create(builder, l, u, v));
  else if (op == "%")
    result = isFloat ? mlir::Value(arith::RemFOp::create(builder, l, u, v))
             : isUnsigned
                 ? mlir::Value(arith::RemUIOp::create(builder, l, u, v))
                 : mlir::Value(arith::RemSIOp::create(builder, l, u, v));
  else if (op == "&")
    result = arith::AndIOp::create(builder, l, u, v);
  else if (op == "|")
    result = arith::OrIOp::create(builder, l, u, v);
  else if (op == "^")
    result = arith::XOrIOp::create(builder, l, u, v);
  else if (op == "<<")
    result = arith::ShLIOp::create(builder, l, u, v);
  else if (op == ">>")
    result = isUnsigned ? mlir::Value(arith::ShRUIOp::create(builder, l, u, v))
                        : mlir::Value(arith::ShRSIOp::create(builder, l, u, v));
  else
    return error(loc,
                 "operator '" + op + "' is not supported on run-time values");
  return FValue::runtime(result, operandType);
}

std::optional<FValue> Emitter::unary(StringRef op, const FValue &operand,
                                     SMLoc loc) {
  if (op == "not" && !operand.isRuntime()) {
    std::optional<bool> truth = truthiness(operand, loc);
    if (!truth)
      return std::nullopt;
    return FValue::boolean(!*truth);
  }
  if (operand.isNumber()) {
    auto typedAs = [&](FValue v) {
      v.typed = operand.typed;
      return v;
    };
    if (op == "+")
      return operand;
    if (op == "-" && operand.kind == FValue::Kind::Float)
      return typedAs(FValue::floating(-operand.floatValue));
    if (op == "-" && operand.intValue == kMinInt128)
      return error(loc, "integer overflow in a compile-time expression "
                        "(compile-time integers are 128-bit)");
    if (op == "-")
      return typedAs(FValue::integer(-operand.intValue));
    if (op == "~" && operand.kind != FValue::Kind::Float)
      return typedAs(FValue::integer(~operand.intValue));
    return error(loc, "operator '" + op + "' is not defined on " +
                          operand.describe());
  }
  if (!operand.isRuntime() || operand.type.isPointer)
    return error(loc, "operator '" + op + "' is not defined on " +
                          operand.describe());
  mlir::Location l = location(loc);
  const TritonType &type = operand.type;
  if (op == "+")
    return operand;
  if (op == "-") {
    if (type.element.isFloat())
      return FValue::runtime(
          mlir::arith::NegFOp::create(builder, l, operand.value), type);
    // -x of an int1 block is int1, as upstream (a python 0 would make it
    // int32); other integers take the weak 0, whose splat
    // ReduceOfNegation.cpp recognizes.
    if (type.element.isBool())
      return binary("-",
                    constant(FValue::integer(0),
                             TritonType{type.element, false, {}}, loc),
                    operand, loc);
    return binary("-", FValue::integer(0), operand, loc);
  }
  if (op == "~" || op == "not") {
    if (type.element.isFloat())
      return error(loc, "operator '" + op + "' needs an integer operand, got " +
                            type.str());
    if (op == "not" && !type.element.isBool())
      return binary("==", operand, FValue::integer(0), loc);
    FValue ones = constant(FValue::integer(-1), type, loc);
    return FValue::runtime(
        mlir::arith::XOrIOp::create(builder, l, operand.value, ones.value),
        type);
  }
  return error(loc, "unknown unary operator '" + op + "'");
}

//===----------------------------------------------------------------------===//
// Operands of element-wise builtins
//===----------------------------------------------------------------------===//

std::vector<FValue> kiln::frontend::bf16AsF32(Emitter &e,
                                              llvm::ArrayRef<FValue> operands,
                                              SMLoc loc) {
  std::vector<FValue> result(operands.begin(), operands.end());
  for (FValue &v : result)
    if (v.isRuntime() && !v.type.isPointer &&
        v.type.element.getKind() == ScalarKind::BF16)
      v = e.castTo(v, DType(ScalarKind::F32), loc);
  return result;
}

std::optional<std::vector<FValue>>
kiln::frontend::legalizeOperands(Emitter &e, llvm::ArrayRef<FValue> operands,
                                 SMLoc loc, StringRef builtin,
                                 bool weakNumbers) {
  std::optional<DType> type;
  std::optional<TritonType> pointerType;
  llvm::SmallVector<int64_t> shape;
  for (const FValue &v : operands) {
    if (!v.isRuntime()) {
      if (!v.isNumber())
        return e.error(loc, builtin + " needs numbers or tensors, got " +
                                v.describe());
      continue;
    }
    if (v.type.isBlockPointer())
      return e.error(loc, builtin + " does not take block pointers");
    if (v.type.isPointer) {
      if (pointerType && *pointerType != v.type.scalar())
        return e.error(loc, builtin + " needs pointers of one type, got " +
                                pointerType->str() + " and " +
                                v.type.scalar().str());
      pointerType = v.type.scalar();
    } else {
      type = type ? promote(*type, v.type.element) : v.type.element;
    }
    auto common = e.broadcastShapes(shape, v.type.shape, loc);
    if (!common)
      return std::nullopt;
    shape = *common;
  }
  if (pointerType) {
    if (type ||
        llvm::any_of(operands, [](const FValue &v) { return !v.isRuntime(); }))
      return e.error(loc, builtin + " cannot mix pointers (" +
                              pointerType->str() + ") with numbers");
  } else {
    for (const FValue &v : operands)
      if (!v.isRuntime()) {
        if (!type) {
          std::optional<FValue> m = e.materialize(v, loc);
          if (!m)
            return std::nullopt;
          type = m->type.element;
        } else {
          type = promote(*type, weakNumbers && !v.typed ? weakType(v, *type)
                                                        : strongType(v));
        }
      }
    if (weakNumbers && type)
      for (const FValue &v : operands)
        if (!v.isRuntime() && !v.typed && !checkWeakNumber(e, v, *type, loc))
          return std::nullopt;
  }
  std::vector<FValue> result;
  for (const FValue &v : operands) {
    std::optional<FValue> r;
    if (!v.isRuntime())
      r = e.constant(v, TritonType{*type, false, shape}, loc);
    else
      r = e.broadcastTo(pointerType ? v : e.castTo(v, *type, loc), shape, loc);
    if (!r)
      return std::nullopt;
    result.push_back(*r);
  }
  return result;
}
