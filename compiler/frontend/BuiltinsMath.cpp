//===- BuiltinsMath.cpp - math builtins, libdevice and inline asm ---------===//
//
// tl.exp/log/sin/... on upstream MLIR's math dialect, with Triton's dtype
// rules (most take fp32 or fp64 only, as libdevice does); the IEEE-rounded
// tl.sqrt_rn/div_rn as kiln ops; libdevice functions
// (`from triton.language.extra import libdevice`) as kiln.extern_elementwise
// calls chosen from a table by argument dtypes; tl.inline_asm_elementwise;
// tl.softmax, composed of tl.max, tl.exp, tl.sum and tl.fdiv.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"
#include "compiler/ir/InlineAsmRegisters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringMap.h"

using namespace kiln::frontend;

namespace {

const char *const kFloatTypes = "fp32 or fp64";

/// Checks every run-time operand's dtype against `allowed` (short names,
/// "fp32 fp64"), as upstream's _check_dtype does; python numbers pass.
bool checkDTypes(Emitter &e, const CallArgs &args, StringRef builtin,
                 llvm::ArrayRef<ScalarKind> allowed, StringRef expectation) {
  bool takesIntegers =
      llvm::any_of(allowed, [](ScalarKind k) { return DType(k).isInteger(); });
  // Beside a float tensor a Python int is promoted to its type, as
  // upstream's binary functions promote it (tl.div_rn(x, 3)).
  auto isFloatTensor = [](const FValue &v) {
    return v.isRuntime() && !v.type.isPointer && !v.type.isBlockPointer() &&
           v.type.element.isFloat();
  };
  bool promoted = llvm::any_of(args.args, isFloatTensor) ||
                  llvm::any_of(args.keywords, [&](const auto &kw) {
                    return isFloatTensor(kw.second);
                  });
  auto check = [&](const FValue &v, SMLoc loc) {
    if (!v.isRuntime()) {
      // A Python int or bool alone becomes an integer block, which
      // float-only functions reject, as upstream's do (tl.sin(8)).
      bool integral =
          v.kind == FValue::Kind::Int || v.kind == FValue::Kind::Bool;
      if (!integral || takesIntegers || promoted)
        return true;
      e.error(loc, builtin + " takes " + expectation + " values, got " +
                       v.describe() + " (write it as a float, e.g. 8.0)");
      return false;
    }
    if (!v.type.isPointer && !v.type.isBlockPointer() &&
        llvm::is_contained(allowed, v.type.element.getKind()))
      return true;
    e.error(loc, builtin + " takes " + expectation + " values, got " +
                     v.type.str() +
                     (v.type.element.isFloat() && !v.type.isPointer &&
                              llvm::is_contained(allowed, ScalarKind::F32)
                          ? " (convert with .to(tl.float32))"
                          : ""));
    return false;
  };
  for (size_t i = 0; i < args.args.size(); ++i)
    if (!check(args.args[i], args.argLocs[i]))
      return false;
  for (size_t k = 0; k < args.keywords.size(); ++k)
    if (!check(args.keywords[k].second, args.keywordLocs[k]))
      return false;
  return true;
}

constexpr ScalarKind kF32F64[] = {ScalarKind::F32, ScalarKind::F64};

//===----------------------------------------------------------------------===//
// Unary math on the math dialect
//===----------------------------------------------------------------------===//

enum class Unary {
  Exp,
  Exp2,
  Log,
  Log2,
  Cos,
  Sin,
  Sqrt,
  Rsqrt,
  Erf,
  Floor,
  Ceil
};

mlir::Value buildUnary(Emitter &e, Unary kind, mlir::Value x, SMLoc loc) {
  auto &b = e.getBuilder();
  mlir::Location l = e.location(loc);
  namespace math = mlir::math;
  switch (kind) {
  case Unary::Exp:
    return math::ExpOp::create(b, l, x);
  case Unary::Exp2:
    return math::Exp2Op::create(b, l, x);
  case Unary::Log:
    return math::LogOp::create(b, l, x);
  case Unary::Log2:
    return math::Log2Op::create(b, l, x);
  case Unary::Cos:
    return math::CosOp::create(b, l, x);
  case Unary::Sin:
    return math::SinOp::create(b, l, x);
  case Unary::Sqrt:
    return math::SqrtOp::create(b, l, x);
  case Unary::Rsqrt:
    return math::RsqrtOp::create(b, l, x);
  case Unary::Erf:
    return math::ErfOp::create(b, l, x);
  case Unary::Floor:
    return math::FloorOp::create(b, l, x);
  case Unary::Ceil:
    return math::CeilOp::create(b, l, x);
  }
  return x;
}

std::optional<FValue> unaryImpl(Emitter &e, const CallArgs &args,
                                StringRef name, Unary kind,
                                llvm::ArrayRef<ScalarKind> allowed = kF32F64,
                                StringRef expectation = kFloatTypes) {
  static const StringRef kParams[] = {"x"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  if (!checkDTypes(e, args, name, allowed, expectation))
    return std::nullopt;
  std::optional<FValue> x = e.materialize(*r.get(0), r.loc(0));
  if (!x)
    return std::nullopt;
  return FValue::runtime(buildUnary(e, kind, x->value, args.loc), x->type);
}

/// x.exp() and the other one-operand methods: upstream checks the dtype in
/// tl.exp but not in the tensor method, so the method of an fp16 or bf16
/// block keeps its type. Kiln computes it in fp32 and rounds the result.
std::optional<FValue> unaryMethod(Emitter &e, const CallArgs &args,
                                  StringRef name, Unary kind) {
  const FValue *self = args.args.empty() ? nullptr : &args.args.front();
  if (!self || !self->isRuntime() || self->type.isPointer ||
      (self->type.element.getKind() != ScalarKind::F16 &&
       self->type.element.getKind() != ScalarKind::BF16) ||
      args.args.size() != 1 || !args.keywords.empty())
    return unaryImpl(e, args, name, kind);
  FValue wide = e.castTo(*self, DType(ScalarKind::F32), args.loc);
  FValue result =
      FValue::runtime(buildUnary(e, kind, wide.value, args.loc), wide.type);
  return e.castTo(result, self->type.element, args.loc);
}

#define KILN_UNARY(fn, name, kind)                                             \
  std::optional<FValue> fn(Emitter &e, const CallArgs &args) {                 \
    return unaryImpl(e, args, name, Unary::kind);                              \
  }                                                                            \
  std::optional<FValue> fn##Method(Emitter &e, const CallArgs &args) {         \
    return unaryMethod(e, args, name, Unary::kind);                            \
  }
KILN_UNARY(expBuiltin, "tl.exp", Exp)
KILN_UNARY(exp2Builtin, "tl.exp2", Exp2)
KILN_UNARY(logBuiltin, "tl.log", Log)
KILN_UNARY(log2Builtin, "tl.log2", Log2)
KILN_UNARY(cosBuiltin, "tl.cos", Cos)
KILN_UNARY(sinBuiltin, "tl.sin", Sin)
KILN_UNARY(sqrtBuiltin, "tl.sqrt", Sqrt)
KILN_UNARY(rsqrtBuiltin, "tl.rsqrt", Rsqrt)
KILN_UNARY(erfBuiltin, "tl.erf", Erf)
KILN_UNARY(floorBuiltin, "tl.floor", Floor)
KILN_UNARY(ceilBuiltin, "tl.ceil", Ceil)
#undef KILN_UNARY

std::optional<FValue> sqrtRn(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x"};
  ArgReader r(e, args, "tl.sqrt_rn", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  if (!checkDTypes(e, args, "tl.sqrt_rn", {ScalarKind::F32}, "fp32"))
    return std::nullopt;
  std::optional<FValue> x = e.materialize(*r.get(0), r.loc(0));
  if (!x)
    return std::nullopt;
  mlir::Value v = kiln::PreciseSqrtOp::create(e.getBuilder(),
                                              e.location(args.loc), x->value);
  return FValue::runtime(v, x->type);
}

std::optional<FValue> sigmoid(Emitter &e, const CallArgs &args) {
  // 1 / (1 + exp(-x)), with tl.exp's dtype rule.
  static const StringRef kParams[] = {"x"};
  ArgReader r(e, args, "tl.sigmoid", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  if (!checkDTypes(e, args, "tl.sigmoid", kF32F64, kFloatTypes))
    return std::nullopt;
  std::optional<FValue> x = e.materialize(*r.get(0), r.loc(0));
  std::optional<FValue> neg = x ? e.unary("-", *x, args.loc) : std::nullopt;
  if (!neg)
    return std::nullopt;
  FValue ex =
      FValue::runtime(buildUnary(e, Unary::Exp, neg->value, args.loc), x->type);
  std::optional<FValue> den = e.binary("+", FValue::integer(1), ex, args.loc);
  return den ? e.binary("/", FValue::integer(1), *den, args.loc) : std::nullopt;
}

/// tl.softmax(x, dim=None, keep_dims=False, ieee_rounding=False): upstream's
/// definition, exp(x - max) / sum along `dim` (0 when None) through tl.max,
/// tl.exp, tl.sum and tl.fdiv, so it promotes narrow floats to fp32 as
/// tl.max does and divides IEEE-rounded on request.
std::optional<FValue> softmax(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "dim", "keep_dims", "ieee_rounding"};
  ArgReader r(e, args, "tl.softmax", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  const FValue &x = *r.get(0);
  if (!x.isRuntime() || !x.type.isBlock() || x.type.isPointer ||
      !x.type.element.isFloat())
    return r.bad(0, "a block of floating-point numbers");
  llvm::ArrayRef<int64_t> shape = x.type.shape;
  int64_t rank = shape.size();
  int64_t dim = 0;
  if (const FValue *d = r.get(1)) {
    std::optional<int64_t> axis =
        readAxis(e, *d, rank, r.loc(1), "the dim of tl.softmax");
    if (!axis)
      return std::nullopt;
    dim = *axis;
  }
  bool flags[2] = {false, false};
  for (size_t i : {size_t(2), size_t(3)}) {
    const FValue *f = r.get(i);
    if (f && !f->isNumber())
      return r.bad(i, "a compile-time bool");
    flags[i - 2] = f && f->intValue != 0;
  }
  bool keepDims = flags[0];
  // Without keep_dims, the max and the sum lose `dim` and broadcast against
  // x from the right: only a reduction whose remaining dimensions line up
  // with x's trailing ones works (dim 0, or equal sizes by chance).
  if (!keepDims) {
    llvm::SmallVector<int64_t> reduced(shape);
    reduced.erase(reduced.begin() + dim);
    for (int64_t k = 1; k < rank; ++k) {
      int64_t a = shape[rank - k], b = reduced[rank - 1 - k];
      if (a != b && a != 1 && b != 1)
        return e.error(args.loc,
                       "tl.softmax along dim " + std::to_string(dim) +
                           " of a block of shape " + formatShape(shape) +
                           " needs keep_dims=True: without it the reduced " +
                           formatShape(reduced) +
                           " does not broadcast against the block");
    }
  }
  SMLoc loc = args.loc;
  FValue axis = FValue::integer(dim);
  FValue keep = FValue::boolean(keepDims);
  std::optional<FValue> max =
      callBuiltin(e, "tl.max", {x, axis}, {{"keep_dims", keep}}, loc);
  std::optional<FValue> shifted =
      max ? e.binary("-", x, *max, loc) : std::nullopt;
  std::optional<FValue> num =
      shifted ? callBuiltin(e, "tl.exp", {*shifted}, {}, loc) : std::nullopt;
  std::optional<FValue> den =
      num ? callBuiltin(e, "tl.sum", {*num, axis}, {{"keep_dims", keep}}, loc)
          : std::nullopt;
  if (!den)
    return std::nullopt;
  return callBuiltin(e, "tl.fdiv", {*num, *den},
                     {{"ieee_rounding", FValue::boolean(flags[1])}}, loc);
}

std::optional<FValue> absBuiltin(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x"};
  ArgReader r(e, args, "tl.abs", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  std::optional<FValue> x = e.materialize(*r.get(0), r.loc(0));
  if (!x)
    return std::nullopt;
  if (x->type.isPointer)
    return r.bad(0, "a number or a tensor of numbers");
  DType t = x->type.element;
  auto &b = e.getBuilder();
  mlir::Location l = e.location(args.loc);
  if (t.isUnsigned() || t.isBool())
    return x;
  if (t.getBitWidth() == 8 && t.isFloat()) {
    // fp8: clear the sign bit.
    TritonType bits{DType(ScalarKind::I8), false, x->type.shape};
    std::optional<FValue> i = e.bitcastTo(*x, bits, args.loc);
    std::optional<FValue> masked =
        i ? e.binary("&", *i, FValue::integer(0x7f), args.loc) : std::nullopt;
    return masked ? e.bitcastTo(*masked, x->type, args.loc) : std::nullopt;
  }
  mlir::Value v = t.isFloat()
                      ? mlir::Value(mlir::math::AbsFOp::create(b, l, x->value))
                      : mlir::Value(mlir::math::AbsIOp::create(b, l, x->value));
  return FValue::runtime(v, x->type);
}

//===----------------------------------------------------------------------===//
// Two- and three-operand math
//===----------------------------------------------------------------------===//

std::optional<FValue> fdiv(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "y", "ieee_rounding"};
  ArgReader r(e, args, "tl.fdiv", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0) || !r.get(1))
    return r.missing(r.get(0) ? 1 : 0);
  for (size_t i = 0; i < 2; ++i) {
    const FValue &v = *r.get(i);
    bool isFloat = v.isRuntime() ? !v.type.isPointer && v.type.element.isFloat()
                                 : v.kind == FValue::Kind::Float;
    if (!isFloat)
      return r.bad(i, "a floating-point value");
  }
  auto xy = legalizeOperands(e, {*r.get(0), *r.get(1)}, args.loc, "tl.fdiv",
                             /*weakNumbers=*/false);
  if (!xy)
    return std::nullopt;
  bool ieee = r.get(2) && r.get(2)->isNumber() && r.get(2)->intValue;
  auto &b = e.getBuilder();
  mlir::Location l = e.location(args.loc);
  mlir::Value v = ieee ? mlir::Value(kiln::PreciseDivFOp::create(
                             b, l, (*xy)[0].value, (*xy)[1].value))
                       : mlir::Value(mlir::arith::DivFOp::create(
                             b, l, (*xy)[0].value, (*xy)[1].value));
  return FValue::runtime(v, (*xy)[0].type);
}

std::optional<FValue> divRn(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "y"};
  ArgReader r(e, args, "tl.div_rn", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0) || !r.get(1))
    return r.missing(r.get(0) ? 1 : 0);
  if (!checkDTypes(e, args, "tl.div_rn", {ScalarKind::F32}, "fp32"))
    return std::nullopt;
  auto xy = legalizeOperands(e, {*r.get(0), *r.get(1)}, args.loc, "tl.div_rn",
                             /*weakNumbers=*/false);
  if (!xy)
    return std::nullopt;
  if ((*xy)[0].type.element.getKind() != ScalarKind::F32)
    return e.error(args.loc,
                   "tl.div_rn takes fp32 values, got " + (*xy)[0].type.str());
  mlir::Value v = kiln::PreciseDivFOp::create(
      e.getBuilder(), e.location(args.loc), (*xy)[0].value, (*xy)[1].value);
  return FValue::runtime(v, (*xy)[0].type);
}

std::optional<FValue> fmaBuiltin(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "y", "z"};
  ArgReader r(e, args, "tl.fma", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 3; ++i)
    if (!r.get(i))
      return r.missing(i);
  auto xyz = legalizeOperands(e, {*r.get(0), *r.get(1), *r.get(2)}, args.loc,
                              "tl.fma", /*weakNumbers=*/false);
  if (!xyz)
    return std::nullopt;
  if (!(*xyz)[0].type.element.isFloat())
    return e.error(args.loc, "tl.fma takes floating-point values, got " +
                                 (*xyz)[0].type.str());
  mlir::Value v = mlir::math::FmaOp::create(
      e.getBuilder(), e.location(args.loc), (*xyz)[0].value, (*xyz)[1].value,
      (*xyz)[2].value);
  return FValue::runtime(v, (*xyz)[0].type);
}

/// propagate_nan: tl.PropagateNan.ALL or NONE (the default).
std::optional<bool> readPropagateNan(const ArgReader &r, size_t i) {
  const FValue *p = r.get(i);
  if (!p)
    return false;
  if (p->kind == FValue::Kind::Builtin && p->text == "tl.PropagateNan.ALL")
    return true;
  if (p->kind == FValue::Kind::Builtin && p->text == "tl.PropagateNan.NONE")
    return false;
  r.bad(i, "tl.PropagateNan.ALL or tl.PropagateNan.NONE");
  return std::nullopt;
}

std::optional<FValue> clamp(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "min", "max", "propagate_nan"};
  ArgReader r(e, args, "tl.clamp", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 3; ++i)
    if (!r.get(i))
      return r.missing(i);
  std::optional<bool> propagate = readPropagateNan(r, 3);
  if (!propagate)
    return std::nullopt;
  auto ops = legalizeOperands(
      e, bf16AsF32(e, {*r.get(0), *r.get(1), *r.get(2)}, args.loc), args.loc,
      "tl.clamp", /*weakNumbers=*/false);
  if (!ops)
    return std::nullopt;
  if (!(*ops)[0].type.element.isFloat())
    return e.error(args.loc, "tl.clamp only supports floating-point values, "
                             "got " +
                                 (*ops)[0].type.str());
  auto &b = e.getBuilder();
  mlir::Location l = e.location(args.loc);
  namespace arith = mlir::arith;
  mlir::Value x = (*ops)[0].value, lo = (*ops)[1].value, hi = (*ops)[2].value;
  mlir::Value v = *propagate
                      ? mlir::Value(arith::MinimumFOp::create(
                            b, l, arith::MaximumFOp::create(b, l, x, lo), hi))
                      : mlir::Value(arith::MinNumFOp::create(
                            b, l, arith::MaxNumFOp::create(b, l, x, lo), hi));
  return FValue::runtime(v, (*ops)[0].type);
}

std::optional<FValue> umulhi(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "y"};
  ArgReader r(e, args, "tl.umulhi", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0) || !r.get(1))
    return r.missing(r.get(0) ? 1 : 0);
  static const ScalarKind kInts[] = {ScalarKind::I32, ScalarKind::I64,
                                     ScalarKind::U32, ScalarKind::U64};
  if (!checkDTypes(e, args, "tl.umulhi", kInts,
                   "int32, int64, uint32 or uint64"))
    return std::nullopt;
  auto xy = legalizeOperands(e, {*r.get(0), *r.get(1)}, args.loc, "tl.umulhi",
                             /*weakNumbers=*/false);
  if (!xy)
    return std::nullopt;
  return emitUMulHi(e, (*xy)[0], (*xy)[1], args.loc);
}

//===----------------------------------------------------------------------===//
// libdevice
//===----------------------------------------------------------------------===//

/// One overload of a libdevice function: argument dtypes → symbol, result.
struct Overload {
  llvm::SmallVector<ScalarKind, 4> args;
  std::string symbol;
  ScalarKind result;
};
struct LibdeviceFunction {
  std::vector<Overload> overloads;
  bool toBool = false; // the int32 result is a predicate: convert to int1
};

const llvm::StringMap<LibdeviceFunction> &libdeviceTable() {
  static const llvm::StringMap<LibdeviceFunction> table = [] {
    using K = ScalarKind;
    llvm::StringMap<LibdeviceFunction> t;
    auto add = [&](StringRef name, llvm::ArrayRef<K> args, std::string symbol,
                   K result) {
      t[name].overloads.push_back(
          {llvm::SmallVector<K, 4>(args), std::move(symbol), result});
    };
    // fp32 → __nv_NAMEf, fp64 → __nv_NAME, with `arity` float operands.
    auto floats = [&](StringRef name, unsigned arity, StringRef base = "") {
      std::string b = ("__nv_" + (base.empty() ? name : base)).str();
      add(name, llvm::SmallVector<K, 4>(arity, K::F32), b + "f", K::F32);
      add(name, llvm::SmallVector<K, 4>(arity, K::F64), b, K::F64);
    };
    for (StringRef n : {"acos",
                        "acosh",
                        "asin",
                        "asinh",
                        "atan",
                        "atanh",
                        "cbrt",
                        "ceil",
                        "cos",
                        "cosh",
                        "cospi",
                        "cyl_bessel_i0",
                        "cyl_bessel_i1",
                        "erf",
                        "erfc",
                        "erfcinv",
                        "erfcx",
                        "erfinv",
                        "exp",
                        "exp10",
                        "exp2",
                        "expm1",
                        "floor",
                        "j0",
                        "j1",
                        "lgamma",
                        "log",
                        "log10",
                        "log1p",
                        "log2",
                        "logb",
                        "nearbyint",
                        "normcdf",
                        "normcdfinv",
                        "rcbrt",
                        "rint",
                        "round",
                        "rsqrt",
                        "sin",
                        "sinh",
                        "sinpi",
                        "sqrt",
                        "tan",
                        "tanh",
                        "tgamma",
                        "trunc",
                        "y0",
                        "y1"})
      floats(n, 1);
    for (StringRef n : {"atan2", "copysign", "fdim", "fmod", "hypot",
                        "nextafter", "remainder", "rhypot", "pow"})
      floats(n, 2);
    floats("fma", 3);
    floats("norm3d", 3);
    floats("rnorm3d", 3);
    floats("norm4d", 4);
    floats("rnorm4d", 4);
    add("pow", {K::F32, K::I32}, "__nv_powif", K::F32);
    add("pow", {K::F64, K::I32}, "__nv_powi", K::F64);
    for (StringRef n : {"ldexp", "scalbn"}) {
      add(n, {K::F32, K::I32}, ("__nv_" + n + "f").str(), K::F32);
      add(n, {K::F64, K::I32}, ("__nv_" + n).str(), K::F64);
    }
    for (StringRef n : {"jn", "yn"}) {
      add(n, {K::I32, K::F32}, ("__nv_" + n + "f").str(), K::F32);
      add(n, {K::I32, K::F64}, ("__nv_" + n).str(), K::F64);
    }
    add("abs", {K::I32}, "__nv_abs", K::I32);
    add("abs", {K::I64}, "__nv_llabs", K::I64);
    add("abs", {K::F32}, "__nv_fabsf", K::F32);
    add("abs", {K::F64}, "__nv_fabs", K::F64);
    // Correctly rounded arithmetic and conversions, per rounding mode.
    for (StringRef m : {"rn", "rz", "rd", "ru"}) {
      std::string s = m.str();
      for (StringRef op : {"add", "sub", "mul", "div"}) {
        add((op + "_" + s).str(), {K::F32, K::F32},
            ("__nv_f" + op + "_" + s).str(), K::F32);
        add((op + "_" + s).str(), {K::F64, K::F64},
            ("__nv_d" + op + "_" + s).str(), K::F64);
      }
      for (StringRef op : {"rcp", "sqrt"}) {
        add((op + "_" + s).str(), {K::F32}, ("__nv_f" + op + "_" + s).str(),
            K::F32);
        add((op + "_" + s).str(), {K::F64}, ("__nv_d" + op + "_" + s).str(),
            K::F64);
      }
      add("fma_" + s, {K::F32, K::F32, K::F32}, "__nv_fmaf_" + s, K::F32);
      add("fma_" + s, {K::F64, K::F64, K::F64}, "__nv_fma_" + s, K::F64);
      struct Conversion {
        const char *name;
        K from, to;
      };
      // Upstream types every unsigned 32-bit result as int32.
      static const Conversion kConversions[] = {
          {"double2float", K::F64, K::F32}, {"double2int", K::F64, K::I32},
          {"double2uint", K::F64, K::I32},  {"float2int", K::F32, K::I32},
          {"float2uint", K::F32, K::I32},   {"int2float", K::I32, K::F32},
          {"uint2float", K::U32, K::F32},   {"float2ll", K::F32, K::I64},
          {"float2ull", K::F32, K::I64},    {"double2ll", K::F64, K::I64},
          {"double2ull", K::F64, K::I64},   {"ll2float", K::I64, K::F32},
          {"ull2float", K::U64, K::F32},    {"ll2double", K::I64, K::F64},
          {"ull2double", K::U64, K::F64},
      };
      for (const Conversion &c : kConversions)
        add(std::string(c.name) + "_" + s, {c.from},
            "__nv_" + std::string(c.name) + "_" + s, c.to);
    }
    add("rsqrt_rn", {K::F32}, "__nv_frsqrt_rn", K::F32);
    add("int2double_rn", {K::I32}, "__nv_int2double_rn", K::F64);
    add("uint2double_rn", {K::U32}, "__nv_uint2double_rn", K::F64);
    add("hiloint2double", {K::I32, K::I32}, "__nv_hiloint2double", K::F64);
    add("double2loint", {K::F64}, "__nv_double2loint", K::I32);
    add("double2hiint", {K::F64}, "__nv_double2hiint", K::I32);
    add("int_as_float", {K::I32}, "__nv_int_as_float", K::F32);
    add("float_as_int", {K::F32}, "__nv_float_as_int", K::I32);
    add("uint_as_float", {K::U32}, "__nv_uint_as_float", K::F32);
    add("float_as_uint", {K::F32}, "__nv_float_as_uint", K::I32);
    add("longlong_as_double", {K::I64}, "__nv_longlong_as_double", K::F64);
    add("double_as_longlong", {K::F64}, "__nv_double_as_longlong", K::I64);
    add("rcp64h", {K::F64}, "__nv_rcp64h", K::F64);
    add("saturatef", {K::F32}, "__nv_saturatef", K::F32);
    add("fast_dividef", {K::F32, K::F32}, "__nv_fast_fdividef", K::F32);
    add("fast_powf", {K::F32, K::F32}, "__nv_fast_powf", K::F32);
    for (StringRef n : {"sinf", "cosf", "tanf", "tanhf", "expf", "exp10f",
                        "logf", "log2f", "log10f"})
      add(("fast_" + n).str(), {K::F32}, ("__nv_fast_" + n).str(), K::F32);
    add("llrint", {K::F32}, "__nv_llrintf", K::I64);
    add("llrint", {K::F64}, "__nv_llrint", K::I64);
    add("llround", {K::F32}, "__nv_llroundf", K::I64);
    add("llround", {K::F64}, "__nv_llround", K::I64);
    add("ilogb", {K::F32}, "__nv_ilogbf", K::I32);
    add("ilogb", {K::F64}, "__nv_ilogb", K::I32);
    add("signbit", {K::F32}, "__nv_signbitf", K::I32);
    add("signbit", {K::F64}, "__nv_signbitd", K::I32);
    add("isnan", {K::F32}, "__nv_isnanf", K::I32);
    add("isnan", {K::F64}, "__nv_isnand", K::I32);
    add("isinf", {K::F32}, "__nv_isinff", K::I32);
    add("isinf", {K::F64}, "__nv_isinfd", K::I32);
    add("finitef", {K::F32}, "__nv_finitef", K::I32);
    add("isfinited", {K::F64}, "__nv_isfinited", K::I32);
    for (StringRef n : {"isnan", "isinf", "finitef", "isfinited"})
      t[n].toBool = true;
    // Integer functions.
    add("clz", {K::I32}, "__nv_clz", K::I32);
    add("clz", {K::I64}, "__nv_clzll", K::I32);
    add("popc", {K::I32}, "__nv_popc", K::I32);
    add("popc", {K::I64}, "__nv_popcll", K::I32);
    add("ffs", {K::I32}, "__nv_ffs", K::I32);
    add("ffs", {K::I64}, "__nv_ffsll", K::I32);
    add("brev", {K::I32}, "__nv_brev", K::I32);
    add("brev", {K::I64}, "__nv_brevll", K::I64);
    add("byte_perm", {K::I32, K::I32, K::I32}, "__nv_byte_perm", K::I32);
    add("mulhi", {K::I32, K::I32}, "__nv_mulhi", K::I32);
    add("mulhi", {K::U32, K::U32}, "__nv_umulhi", K::U32);
    add("mulhi", {K::I64, K::I64}, "__nv_mul64hi", K::I64);
    add("mulhi", {K::U64, K::U64}, "__nv_umul64hi", K::U64);
    add("mul24", {K::I32, K::I32}, "__nv_mul24", K::I32);
    add("mul24", {K::U32, K::U32}, "__nv_umul24", K::U32);
    add("sad", {K::I32, K::I32, K::U32}, "__nv_sad", K::I32);
    add("sad", {K::U32, K::U32, K::U32}, "__nv_usad", K::U32);
    add("hadd", {K::I32, K::I32}, "__nv_hadd", K::I32);
    add("hadd", {K::U32, K::U32}, "__nv_uhadd", K::U32);
    add("rhadd", {K::I32, K::I32}, "__nv_rhadd", K::I32);
    add("rhadd", {K::U32, K::U32}, "__nv_urhadd", K::U32);
    return t;
  }();
  return table;
}

const Overload *findOverload(const LibdeviceFunction &f,
                             llvm::ArrayRef<FValue> args) {
  for (const Overload &o : f.overloads) {
    if (o.args.size() != args.size())
      continue;
    bool match = true;
    for (size_t i = 0; i < args.size(); ++i)
      match &= !args[i].type.isPointer &&
               args[i].type.element.getKind() == o.args[i];
    if (match)
      return &o;
  }
  return nullptr;
}

/// `libdevice.NAME(args...)`: the overload for the arguments' dtypes, else
/// for their common dtype (as upstream's extern_elementwise dispatches).
std::optional<FValue> libdeviceCall(Emitter &e, const CallArgs &args) {
  StringRef name = args.callee;
  std::string builtin = "libdevice." + name.str();
  auto it = libdeviceTable().find(name);
  if (it == libdeviceTable().end())
    return e.error(args.loc, "'" + builtin +
                                 "' is not a libdevice function "
                                 "Kiln knows");
  const LibdeviceFunction &f = it->second;
  if (!args.keywords.empty())
    return e.error(args.keywordLocs[0],
                   builtin + " takes positional arguments only");
  size_t arity = f.overloads.front().args.size();
  if (args.args.size() != arity)
    return e.error(args.loc, builtin + " takes " + std::to_string(arity) +
                                 " argument(s), got " +
                                 std::to_string(args.args.size()));
  std::vector<FValue> operands;
  llvm::SmallVector<int64_t> shape;
  for (size_t i = 0; i < args.args.size(); ++i) {
    std::optional<FValue> v = e.materialize(args.args[i], args.argLocs[i]);
    if (!v)
      return std::nullopt;
    if (v->type.isPointer)
      return e.error(args.argLocs[i],
                     builtin + " takes numbers, got " + v->type.str());
    auto common = e.broadcastShapes(shape, v->type.shape, args.loc);
    if (!common)
      return std::nullopt;
    shape = *common;
    operands.push_back(*v);
  }
  const Overload *o = findOverload(f, operands);
  if (!o) {
    auto converted = legalizeOperands(e, operands, args.loc, builtin);
    if (!converted)
      return std::nullopt;
    o = findOverload(f, *converted);
    if (o)
      operands = *converted;
  }
  if (!o) {
    std::string got, accepted;
    for (const FValue &v : operands)
      got += (got.empty() ? "" : ", ") + v.type.scalar().str();
    for (const Overload &ov : f.overloads) {
      std::string sig;
      for (ScalarKind k : ov.args)
        sig += (sig.empty() ? "" : ", ") + DType(k).getShortName().str();
      accepted += (accepted.empty() ? "(" : ", (") + sig + ")";
    }
    return e.error(args.loc, builtin + " has no overload for (" + got +
                                 "); it takes " + accepted);
  }
  llvm::SmallVector<mlir::Value> values;
  for (FValue &v : operands) {
    std::optional<FValue> b = e.broadcastTo(v, shape, args.loc);
    if (!b)
      return std::nullopt;
    values.push_back(b->value);
  }
  TritonType resultType{DType(o->result), false, shape};
  auto &b = e.getBuilder();
  mlir::Value v = kiln::ExternElementwiseOp::create(
      b, e.location(args.loc), resultType.toMLIR(e.getContext()), values,
      b.getStringAttr(o->symbol), b.getStringAttr("libdevice"),
      b.getUnitAttr());
  FValue result = FValue::runtime(v, resultType);
  if (f.toBool)
    return e.castTo(result, DType(ScalarKind::I1), args.loc);
  return result;
}

//===----------------------------------------------------------------------===//
// Inline assembly
//===----------------------------------------------------------------------===//

std::optional<FValue> inlineAsmElementwise(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"asm",   "constraints", "args",
                                      "dtype", "is_pure",     "pack"};
  ArgReader r(e, args, "tl.inline_asm_elementwise", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 6; ++i)
    if (!r.get(i))
      return r.missing(i);
  for (size_t i : {size_t(0), size_t(1)})
    if (r.get(i)->kind != FValue::Kind::String)
      return r.bad(i, "a string");
  if (!r.get(4)->isNumber())
    return r.bad(4, "a compile-time bool");
  if (!r.get(5)->isInt() || r.get(5)->intValue < 1)
    return r.bad(5, "a positive compile-time int");
  const FValue &dtypeArg = *r.get(3);
  bool multiple = dtypeArg.kind == FValue::Kind::Tuple;
  std::vector<FValue> dtypes =
      multiple ? dtypeArg.elements : std::vector<FValue>{dtypeArg};
  for (const FValue &d : dtypes)
    if (d.kind != FValue::Kind::DType || d.type.isPointer)
      return r.bad(3, "a dtype or a tuple of dtypes");
  std::vector<FValue> operands;
  llvm::SmallVector<int64_t> shape;
  for (const FValue &a : flattenVarargs(*r.get(2))) {
    std::optional<FValue> v = e.materialize(a, r.loc(2));
    if (!v)
      return std::nullopt;
    auto common = e.broadcastShapes(shape, v->type.shape, r.loc(2));
    if (!common)
      return std::nullopt;
    shape = *common;
    operands.push_back(*v);
  }
  // The registers each call passes, by the lowering's rule
  // (InlineAsmRegisters.h). A constraint string naming other counts would
  // reach LLVM and crash it.
  int64_t pack = r.get(5)->intValue;
  auto registers = [&](const TritonType &t) -> int64_t {
    unsigned bits = t.isPointer ? 64 : t.element.getBitWidth();
    return kiln::inlineAsmRegistersPerGroup(bits, unsigned(pack));
  };
  int64_t wantOutputs = 0, wantInputs = 0;
  for (const FValue &d : dtypes)
    wantOutputs += registers(d.type);
  for (const FValue &v : operands)
    wantInputs += registers(v.type);
  int64_t outputs = 0, inputs = 0;
  llvm::SmallVector<StringRef> entries;
  StringRef(r.get(1)->text).split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef c : entries) {
    c = c.trim();
    if (c.starts_with("~"))
      continue;
    (c.starts_with("=") ? outputs : inputs) += 1;
  }
  if (outputs != wantOutputs || inputs != wantInputs)
    return e.error(r.loc(1),
                   "the constraints name " + std::to_string(outputs) +
                       " outputs and " + std::to_string(inputs) +
                       " inputs, but with pack=" + std::to_string(pack) +
                       " each call takes " + std::to_string(wantOutputs) +
                       " output and " + std::to_string(wantInputs) +
                       " input registers (one per element of 32 bits or more, "
                       "narrower elements packed 32 bits a register)");
  llvm::SmallVector<mlir::Value> values;
  for (const FValue &v : operands) {
    std::optional<FValue> b = e.broadcastTo(v, shape, r.loc(2));
    if (!b)
      return std::nullopt;
    values.push_back(b->value);
  }
  llvm::SmallVector<mlir::Type> resultTypes;
  std::vector<TritonType> tritonTypes;
  for (const FValue &d : dtypes) {
    tritonTypes.push_back(TritonType{d.type.element, false, shape});
    resultTypes.push_back(tritonTypes.back().toMLIR(e.getContext()));
  }
  auto &b = e.getBuilder();
  auto op = kiln::InlineAsmElementwiseOp::create(
      b, e.location(args.loc), resultTypes, values,
      b.getStringAttr(r.get(0)->text), b.getStringAttr(r.get(1)->text),
      b.getBoolAttr(r.get(4)->intValue != 0),
      b.getI32IntegerAttr(int32_t(r.get(5)->intValue)));
  std::vector<FValue> results;
  for (size_t i = 0; i < tritonTypes.size(); ++i)
    results.push_back(FValue::runtime(op.getResult(i), tritonTypes[i]));
  if (!multiple)
    return results.front();
  return FValue::tuple(std::move(results));
}

//===----------------------------------------------------------------------===//
// tl.map_elementwise
//===----------------------------------------------------------------------===//

/// tl.map_elementwise(scalar_fn, *args, pack=1): the jit function runs on
/// scalars, inlined into the region of a kiln.map_elementwise whose
/// operands are the arguments broadcast to one shape. Its arguments are
/// `pack` elements of each operand in turn; it returns `pack` elements of
/// each result in turn. At least one argument must be a block, as
/// upstream's op requires.
std::optional<FValue> mapElementwise(Emitter &e, const CallArgs &args) {
  static constexpr StringRef kName = "tl.map_elementwise";
  if (args.args.empty() || args.args.front().kind != FValue::Kind::Function)
    return e.error(args.argLocs.empty() ? args.loc : args.argLocs.front(),
                   std::string(kName) +
                       " needs a @triton.jit function as its first "
                       "argument, then the blocks to map it over");
  if (args.args.size() < 2)
    return e.error(args.loc, std::string(kName) +
                                 " needs at least one block to map over");
  int64_t pack = 1;
  for (auto [i, kw] : llvm::enumerate(args.keywords)) {
    if (kw.first != "pack")
      return e.error(args.keywordLocs[i],
                     std::string(kName) +
                         " got an unexpected keyword argument '" + kw.first +
                         "' (it takes pack=)");
    if (!kw.second.isInt() || kw.second.intValue < 1)
      return e.error(args.keywordLocs[i],
                     std::string(kName) +
                         ": pack must be a positive compile-time int");
    pack = kw.second.intValue;
  }
  std::vector<FValue> operands;
  llvm::SmallVector<int64_t> shape;
  bool anyBlock = false;
  for (size_t i = 1; i < args.args.size(); ++i) {
    std::optional<FValue> v = e.materialize(args.args[i], args.argLocs[i]);
    if (!v)
      return std::nullopt;
    if (v->kind != FValue::Kind::Runtime)
      return e.error(args.argLocs[i],
                     std::string(kName) +
                         " maps over blocks and scalars, got " +
                         args.args[i].describe());
    anyBlock = anyBlock || v->type.isBlock();
    auto common = e.broadcastShapes(shape, v->type.shape, args.argLocs[i]);
    if (!common)
      return std::nullopt;
    shape = *common;
    operands.push_back(*v);
  }
  // As upstream: the op maps over blocks (a scalar-only call would be the
  // function's own call).
  if (!anyBlock)
    return e.error(args.loc,
                   std::string(kName) +
                       " maps over blocks, and every argument here is a "
                       "scalar; call the function directly");
  CallArgs call;
  call.loc = args.loc;
  call.callee = args.args.front().function->name;

  auto &b = e.getBuilder();
  mlir::Location loc = e.location(args.loc);
  llvm::SmallVector<mlir::Value> values;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::optional<FValue> v =
        e.broadcastTo(operands[i], shape, args.argLocs[i + 1]);
    if (!v)
      return std::nullopt;
    values.push_back(v->value);
  }
  // The function is emitted into the region of a result-less op first (its
  // result types are known after); the region then moves to the real op.
  auto draft = kiln::MapElementwiseOp::create(
      b, loc, mlir::TypeRange{}, values, b.getI32IntegerAttr(int32_t(pack)));
  mlir::OpBuilder::InsertionGuard guard(b);
  mlir::Block *block = b.createBlock(&draft.getBody());
  for (size_t i = 0; i < operands.size(); ++i) {
    TritonType scalar{operands[i].type.element, operands[i].type.isPointer, {}};
    for (int64_t j = 0; j < pack; ++j) {
      mlir::Value arg = block->addArgument(scalar.toMLIR(e.getContext()), loc);
      call.args.push_back(FValue::runtime(arg, scalar));
      call.argLocs.push_back(args.argLocs[i + 1]);
    }
  }
  auto discard = [&] {
    draft->erase();
    return std::nullopt;
  };
  b.setInsertionPointToStart(block);
  std::optional<FValue> returned = e.call(args.args.front(), call);
  if (!returned)
    return discard();
  std::vector<FValue> scalars = returned->kind == FValue::Kind::Tuple
                                    ? returned->elements
                                    : std::vector<FValue>{*returned};
  if (scalars.empty() || scalars.size() % pack != 0) {
    e.error(args.loc,
            "the function given to " + std::string(kName) + " must return " +
                (pack == 1 ? std::string("a value or a tuple")
                           : "a multiple of pack=" + std::to_string(pack)) +
                " of scalars, got " + returned->describe());
    return discard();
  }
  llvm::SmallVector<mlir::Value> yielded;
  std::vector<TritonType> types;
  for (size_t r = 0; r < scalars.size(); ++r) {
    std::optional<FValue> v = e.materialize(scalars[r], args.loc);
    if (!v)
      return discard();
    if (v->kind != FValue::Kind::Runtime || v->type.isBlock()) {
      e.error(args.loc, "the function given to " + std::string(kName) +
                            " must return scalars, got " +
                            scalars[r].describe());
      return discard();
    }
    // The pack elements of one result share its type.
    if (r % pack != 0 && v->type.element != types.back().element) {
      e.error(args.loc, "the function given to " + std::string(kName) +
                            " returns elements of one result in "
                            "different types");
      return discard();
    }
    if (r % pack == 0)
      types.push_back(TritonType{v->type.element, v->type.isPointer, shape});
    yielded.push_back(v->value);
  }
  b.setInsertionPointToEnd(block);
  kiln::MapElementwiseReturnOp::create(b, loc, yielded);
  b.setInsertionPoint(draft);
  llvm::SmallVector<mlir::Type> resultTypes;
  for (const TritonType &t : types)
    resultTypes.push_back(t.toMLIR(e.getContext()));
  auto op = kiln::MapElementwiseOp::create(b, loc, resultTypes, values,
                                           draft.getPackAttr());
  op.getBody().takeBody(draft.getBody());
  draft->erase();
  std::vector<FValue> results;
  for (size_t r = 0; r < types.size(); ++r)
    results.push_back(FValue::runtime(op.getResult(r), types[r]));
  if (returned->kind != FValue::Kind::Tuple)
    return results.front();
  return FValue::tuple(std::move(results));
}

//===----------------------------------------------------------------------===//
// tl.extra.cuda: special registers, the launch's warps, grid dependency
// control
//===----------------------------------------------------------------------===//

/// One inline-asm instruction with no operands and a scalar result.
FValue scalarAsm(Emitter &e, StringRef asmText, StringRef constraint,
                 ScalarKind kind, bool pure, SMLoc loc) {
  auto &b = e.getBuilder();
  TritonType type{DType(kind), false, {}};
  auto op = kiln::InlineAsmElementwiseOp::create(
      b, e.location(loc), mlir::TypeRange{type.toMLIR(e.getContext())},
      mlir::ValueRange{}, b.getStringAttr(asmText), b.getStringAttr(constraint),
      b.getBoolAttr(pure), b.getI32IntegerAttr(1));
  return FValue::runtime(op.getResult(0), type);
}

std::optional<FValue> noArguments(Emitter &e, const CallArgs &args,
                                  StringRef name) {
  ArgReader r(e, args, name, {});
  if (!r.isOk())
    return std::nullopt;
  return FValue::none();
}

std::optional<FValue> cudaGlobaltimer(Emitter &e, const CallArgs &args) {
  if (!noArguments(e, args, "tl.extra.cuda.globaltimer"))
    return std::nullopt;
  return scalarAsm(e, "mov.u64 $0, %globaltimer;", "=l", ScalarKind::I64,
                   /*pure=*/false, args.loc);
}

std::optional<FValue> cudaSmid(Emitter &e, const CallArgs &args) {
  if (!noArguments(e, args, "tl.extra.cuda.smid"))
    return std::nullopt;
  return scalarAsm(e, "mov.u32 $0, %smid;", "=r", ScalarKind::I32,
                   /*pure=*/true, args.loc);
}

// tl.target_info: the compiled-for target as compile-time booleans (CUDA,
// the --arch's compute capability), as upstream's constexpr functions
// answer them for the active GPU.
std::optional<FValue> targetIsCuda(Emitter &e, const CallArgs &args) {
  if (!noArguments(e, args, "tl.target_info.is_cuda"))
    return std::nullopt;
  return FValue::boolean(true);
}

std::optional<FValue> targetIsHip(Emitter &e, const CallArgs &args) {
  if (!noArguments(e, args, "tl.target_info." + args.callee))
    return std::nullopt;
  return FValue::boolean(false);
}

std::optional<FValue> targetCapabilityGeq(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"major", "minor"};
  ArgReader r(e, args, "tl.target_info.cuda_capability_geq", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  for (size_t i : {size_t(0), size_t(1)})
    if (r.get(i) && !r.get(i)->isInt())
      return r.bad(i, "a compile-time int");
  int64_t minor = r.get(1) ? r.get(1)->intValue : 0;
  return FValue::boolean(e.getHostTarget().arch >=
                         r.get(0)->intValue * 10 + minor);
}

std::optional<FValue> cudaNumWarps(Emitter &e, const CallArgs &args) {
  if (!noArguments(e, args, "tl.extra.cuda.num_warps"))
    return std::nullopt;
  return FValue::integer(e.readNumWarps());
}

std::optional<FValue> cudaNumThreads(Emitter &e, const CallArgs &args) {
  if (!noArguments(e, args, "tl.extra.cuda.num_threads"))
    return std::nullopt;
  return FValue::integer(int64_t(e.readNumWarps()) * 32);
}

/// griddepcontrol (programmatic dependent launch) exists from sm_90; before,
/// no grid launches early, so there is nothing to wait for or signal.
std::optional<FValue> gridDependencyControl(Emitter &e, const CallArgs &args,
                                            StringRef name,
                                            StringRef instruction) {
  if (!noArguments(e, args, name))
    return std::nullopt;
  if (e.getHostTarget().arch >= 90)
    scalarAsm(e, (instruction + " // dummy $0").str(), "=r", ScalarKind::I32,
              /*pure=*/false, args.loc);
  return FValue::none();
}

std::optional<FValue> cudaGdcWait(Emitter &e, const CallArgs &args) {
  return gridDependencyControl(e, args, "tl.extra.cuda.gdc_wait",
                               "griddepcontrol.wait;");
}

std::optional<FValue> cudaGdcLaunchDependents(Emitter &e,
                                              const CallArgs &args) {
  return gridDependencyControl(e, args, "tl.extra.cuda.gdc_launch_dependents",
                               "griddepcontrol.launch_dependents;");
}

} // namespace

FValue kiln::frontend::emitUMulHi(Emitter &e, const FValue &a, const FValue &b,
                                  SMLoc loc) {
  auto &builder = e.getBuilder();
  mlir::Location l = e.location(loc);
  unsigned bits = a.type.element.getBitWidth();
  // One call per element of `symbol` from `library`.
  auto externCall = [&](llvm::StringRef symbol, llvm::StringRef library) {
    mlir::Value v = kiln::ExternElementwiseOp::create(
        builder, l, a.type.toMLIR(e.getContext()),
        mlir::ValueRange{a.value, b.value}, builder.getStringAttr(symbol),
        builder.getStringAttr(library), builder.getUnitAttr());
    return FValue::runtime(v, a.type);
  };
  // libdevice's __nv_umul64hi (mul.hi.u64): arith.mului_extended has no
  // lowering for blocks (tl.philox on 64-bit counters reaches here).
  if (bits == 64)
    return externCall("__nv_umul64hi", "libdevice");
  // The high half of a product with zero (Philox's first round, its
  // counters' zero words) folds here; the intrinsic below would not fold.
  for (const FValue *v : {&a, &b})
    if (mlir::matchPattern(v->value, mlir::m_Zero()))
      return FValue::runtime(v->value, a.type);
  // mul.hi.u32 through NVVM's intrinsic, as Triton emits it: LLVM's NVPTX
  // back end then still sees the low product of (x | c) * K as x * K + c * K
  // (Philox's counters of one thread differ by constants) where the
  // widened 64-bit product hid it (tutorial 04: 40 registers where Triton
  // takes 32).
  if (bits == 32)
    return externCall("llvm.nvvm.mulhi.ui", "nvvm");
  TritonType wide = a.type;
  wide.element = DType(ScalarKind::U64);
  mlir::Type wideType = wide.toMLIR(e.getContext());
  mlir::Value x = mlir::arith::ExtUIOp::create(builder, l, wideType, a.value);
  mlir::Value y = mlir::arith::ExtUIOp::create(builder, l, wideType, b.value);
  mlir::Value p = mlir::arith::MulIOp::create(builder, l, x, y);
  FValue shift = e.constant(FValue::integer(bits), wide, loc);
  mlir::Value hi = mlir::arith::ShRUIOp::create(builder, l, p, shift.value);
  mlir::Value r = mlir::arith::TruncIOp::create(
      builder, l, a.type.toMLIR(e.getContext()), hi);
  return FValue::runtime(r, a.type);
}

void kiln::frontend::addMathBuiltins(BuiltinTable &table) {
  static const std::pair<const char *, BuiltinFn> kEntries[] = {
      {"exp", expBuiltin},     {"exp2", exp2Builtin},   {"log", logBuiltin},
      {"log2", log2Builtin},   {"cos", cosBuiltin},     {"sin", sinBuiltin},
      {"sqrt", sqrtBuiltin},   {"rsqrt", rsqrtBuiltin}, {"erf", erfBuiltin},
      {"floor", floorBuiltin}, {"ceil", ceilBuiltin},   {"sqrt_rn", sqrtRn},
      {"sigmoid", sigmoid},    {"abs", absBuiltin},     {"fdiv", fdiv},
      {"div_rn", divRn},       {"fma", fmaBuiltin},     {"clamp", clamp},
      {"umulhi", umulhi},      {"softmax", softmax},
  };
  // tl.NAME, and x.NAME() for the one-operand ones (tensor methods).
  for (const auto &[name, fn] : kEntries) {
    table[std::string("tl.") + name] = fn;
    table[std::string("method.") + name] = fn;
  }
  static const std::pair<const char *, BuiltinFn> kMethods[] = {
      {"exp", expBuiltinMethod},   {"exp2", exp2BuiltinMethod},
      {"log", logBuiltinMethod},   {"log2", log2BuiltinMethod},
      {"cos", cosBuiltinMethod},   {"sin", sinBuiltinMethod},
      {"sqrt", sqrtBuiltinMethod}, {"rsqrt", rsqrtBuiltinMethod},
      {"erf", erfBuiltinMethod},   {"floor", floorBuiltinMethod},
      {"ceil", ceilBuiltinMethod},
  };
  for (const auto &[name, fn] : kMethods)
    table[std::string("method.") + name] = fn;
  for (const auto &entry : libdeviceTable())
    table["libdevice." + entry.getKey().str()] = libdeviceCall;
  table["tl.inline_asm_elementwise"] = inlineAsmElementwise;
  table["tl.map_elementwise"] = mapElementwise;
  table["cuda.globaltimer"] = cudaGlobaltimer;
  table["cuda.smid"] = cudaSmid;
  table["cuda.num_warps"] = cudaNumWarps;
  table["target_info.is_cuda"] = targetIsCuda;
  table["target_info.cuda_capability_geq"] = targetCapabilityGeq;
  for (const char *name :
       {"target_info.is_hip", "target_info.is_hip_cdna3",
        "target_info.is_hip_cdna4", "target_info.is_hip_gfx1250"})
    table[name] = targetIsHip;
  table["cuda.num_threads"] = cudaNumThreads;
  table["cuda.gdc_wait"] = cudaGdcWait;
  table["cuda.gdc_launch_dependents"] = cudaGdcLaunchDependents;
}
