//===- Builtins.cpp - the Triton-language builtins ------------------------===//
//
// One entry per builtin: `tl.*` functions, tensor methods (`x.to(...)`) and
// the Python builtins kernels use on compile-time values. Each entry checks
// its arguments (naming the builtin, the argument and the expectation) and
// builds IR through the Emitter's typing services.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/bit.h"
#include <cmath>
#include <cstring>

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;

namespace {

std::optional<FValue> programIdLike(Emitter &e, const CallArgs &args,
                                    bool numPrograms) {
  StringRef name = numPrograms ? "tl.num_programs" : "tl.program_id";
  static const StringRef kParams[] = {"axis"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<int64_t> axis = r.constInt(0, 0);
  if (!axis)
    return std::nullopt;
  if (*axis < 0 || *axis > 2)
    return r.bad(0, "0, 1 or 2");
  mlir::Location l = e.location(args.loc);
  auto &b = e.getBuilder();
  mlir::Value v = numPrograms ? mlir::Value(kiln::NumProgramsOp::create(
                                    b, l, b.getI32Type(), int32_t(*axis)))
                              : mlir::Value(kiln::ProgramIdOp::create(
                                    b, l, b.getI32Type(), int32_t(*axis)));
  return FValue::runtime(v, TritonType{DType(ScalarKind::I32), false, {}});
}

std::optional<FValue> programId(Emitter &e, const CallArgs &args) {
  return programIdLike(e, args, false);
}
std::optional<FValue> numPrograms(Emitter &e, const CallArgs &args) {
  return programIdLike(e, args, true);
}

std::optional<FValue> arange(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"start", "end"};
  ArgReader r(e, args, "tl.arange", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<int64_t> start = r.constInt(0);
  std::optional<int64_t> end = start ? r.constInt(1) : std::nullopt;
  if (!end)
    return std::nullopt;
  int64_t n = *end - *start;
  if (n <= 0)
    return e.error(args.loc, "tl.arange(" + std::to_string(*start) + ", " +
                                 std::to_string(*end) +
                                 "): end must be greater than start");
  if (!llvm::isPowerOf2_64(uint64_t(n)))
    return e.error(args.loc, "tl.arange(" + std::to_string(*start) + ", " +
                                 std::to_string(*end) + ") has " +
                                 std::to_string(n) +
                                 " elements; the count must be a power of 2");
  if (*start < INT32_MIN || *end > INT32_MAX)
    return e.error(args.loc, "tl.arange bounds must fit in int32");
  TritonType type{DType(ScalarKind::I32), false, {n}};
  auto &b = e.getBuilder();
  mlir::Value v = kiln::MakeRangeOp::create(
      b, e.location(args.loc), type.toMLIR(e.getContext()),
      b.getI32IntegerAttr(int32_t(*start)), b.getI32IntegerAttr(int32_t(*end)));
  return FValue::runtime(v, type);
}

static bool isEmptyShape(const FValue &shape) {
  return shape.kind == FValue::Kind::Tuple && shape.elements.empty();
}

std::optional<FValue> full(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"shape", "value", "dtype"};
  ArgReader r(e, args, "tl.full", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  // `()`: a 0-d tensor, which behaves as a scalar.
  auto shape = isEmptyShape(*r.get(0))
                   ? std::optional<llvm::SmallVector<int64_t>>(
                         llvm::SmallVector<int64_t>{})
                   : readShape(e, *r.get(0), r.loc(0), "the shape of tl.full");
  if (!shape)
    return std::nullopt;
  const FValue *dtype = r.get(2);
  if (!dtype || dtype->kind != FValue::Kind::DType || dtype->type.isPointer)
    return r.bad(2, "a dtype such as tl.float32");
  const FValue *value = r.get(1);
  if (!value)
    return r.missing(1);
  TritonType type{dtype->type.element, false, *shape};
  if (value->isNumber())
    return e.constant(*value, type, r.loc(1));
  if (!value->isRuntime() || value->type.isBlock())
    return r.bad(1, "a number or a run-time scalar");
  FValue cast = e.castTo(*value, type.element, r.loc(1));
  return e.broadcastTo(cast, *shape, r.loc(1));
}

std::optional<FValue> zeros(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"shape", "dtype"};
  ArgReader r(e, args, "tl.zeros", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  auto shape = isEmptyShape(*r.get(0))
                   ? std::optional<llvm::SmallVector<int64_t>>(
                         llvm::SmallVector<int64_t>{})
                   : readShape(e, *r.get(0), r.loc(0), "the shape of tl.zeros");
  if (!shape)
    return std::nullopt;
  const FValue *dtype = r.get(1);
  if (!dtype || dtype->kind != FValue::Kind::DType || dtype->type.isPointer)
    return r.bad(1, "a dtype such as tl.float32");
  return e.constant(FValue::integer(0),
                    TritonType{dtype->type.element, false, *shape}, args.loc);
}

/// tl.zeros_like(input) and full_like(input, value, dtype=None): a block of
/// the input's shape and (by default) dtype.
std::optional<FValue> fullLikeImpl(Emitter &e, const CallArgs &args,
                                   bool zeros) {
  static const StringRef kParams[] = {"input", "value", "dtype"};
  StringRef name = zeros ? "tl.zeros_like" : "tl.full_like";
  ArgReader r(e, args, name,
              llvm::ArrayRef<StringRef>(kParams).take_front(zeros ? 1 : 3));
  if (!r.isOk())
    return std::nullopt;
  const FValue *input = r.get(0);
  if (!input)
    return r.missing(0);
  if (!input->isRuntime() || input->type.isPointer)
    return r.bad(0, "a tensor of numbers");
  TritonType type = input->type;
  if (!zeros && r.get(2)) {
    const FValue *dtype = r.get(2);
    if (dtype->kind != FValue::Kind::DType || dtype->type.isPointer)
      return r.bad(2, "a dtype such as tl.float32");
    type.element = dtype->type.element;
  }
  if (zeros)
    return e.constant(FValue::integer(0), type, args.loc);
  const FValue *value = r.get(1);
  if (!value)
    return r.missing(1);
  if (value->isNumber())
    return e.constant(*value, type, r.loc(1));
  if (!value->isRuntime() || value->type.isBlock() || value->type.isPointer)
    return r.bad(1, "a number or a run-time scalar");
  return e.broadcastTo(e.castTo(*value, type.element, r.loc(1)), type.shape,
                       r.loc(1));
}
std::optional<FValue> zerosLike(Emitter &e, const CallArgs &args) {
  return fullLikeImpl(e, args, true);
}
std::optional<FValue> fullLike(Emitter &e, const CallArgs &args) {
  return fullLikeImpl(e, args, false);
}

std::optional<FValue> where(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"condition", "x", "y"};
  ArgReader r(e, args, "tl.where", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 3; ++i)
    if (!r.get(i))
      return r.missing(i);
  std::optional<FValue> cond = e.materialize(*r.get(0), r.loc(0));
  if (!cond)
    return std::nullopt;
  if (cond->type.isPointer)
    return r.bad(0, "a boolean condition");
  if (!cond->type.element.isBool())
    cond = e.castTo(*cond, DType(ScalarKind::I1), r.loc(0));
  // x and y are typed together (as x + y would), then all three broadcast.
  auto xy = legalizeOperands(e, {*r.get(1), *r.get(2)}, args.loc, "tl.where");
  if (!xy)
    return std::nullopt;
  auto shape =
      e.broadcastShapes(cond->type.shape, (*xy)[0].type.shape, args.loc);
  std::optional<FValue> c =
      shape ? e.broadcastTo(*cond, *shape, r.loc(0)) : std::nullopt;
  std::optional<FValue> a =
      c ? e.broadcastTo((*xy)[0], *shape, r.loc(1)) : std::nullopt;
  std::optional<FValue> b =
      a ? e.broadcastTo((*xy)[1], *shape, r.loc(2)) : std::nullopt;
  if (!b)
    return std::nullopt;
  mlir::Value v = mlir::arith::SelectOp::create(
      e.getBuilder(), e.location(args.loc), c->value, a->value, b->value);
  return FValue::runtime(v, a->type);
}

std::optional<FValue> minMax(Emitter &e, const CallArgs &args, bool isMax) {
  static const StringRef kParams[] = {"x", "y", "propagate_nan"};
  StringRef name = isMax ? "tl.maximum" : "tl.minimum";
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0) || !r.get(1))
    return r.missing(r.get(0) ? 1 : 0);
  // Typed as upstream types them: numbers as tensors (fp32, int32; not
  // weakly), bf16 widened to fp32.
  auto ops = legalizeOperands(e, bf16AsF32(e, {*r.get(0), *r.get(1)}, args.loc),
                              args.loc, name, /*weakNumbers=*/false);
  if (!ops)
    return std::nullopt;
  const FValue *a = &(*ops)[0], *b = &(*ops)[1];
  if (a->type.isPointer)
    return e.error(args.loc, name + " takes numbers, got " + a->type.str());
  DType type = a->type.element;
  bool propagateNan = false;
  if (const FValue *p = r.get(2)) {
    if (p->kind == FValue::Kind::Builtin && p->text == "tl.PropagateNan.ALL")
      propagateNan = true;
    else if (!(p->kind == FValue::Kind::Builtin &&
               p->text == "tl.PropagateNan.NONE"))
      return r.bad(2, "tl.PropagateNan.ALL or tl.PropagateNan.NONE");
  }
  auto &builder = e.getBuilder();
  mlir::Location l = e.location(args.loc);
  mlir::Value v;
  namespace arith = mlir::arith;
  if (type.isFloat() && propagateNan)
    v = isMax ? mlir::Value(
                    arith::MaximumFOp::create(builder, l, a->value, b->value))
              : mlir::Value(
                    arith::MinimumFOp::create(builder, l, a->value, b->value));
  else if (type.isFloat())
    v = isMax ? mlir::Value(
                    arith::MaxNumFOp::create(builder, l, a->value, b->value))
              : mlir::Value(
                    arith::MinNumFOp::create(builder, l, a->value, b->value));
  else if (type.isUnsigned() || type.isBool())
    v = isMax ? mlir::Value(
                    arith::MaxUIOp::create(builder, l, a->value, b->value))
              : mlir::Value(
                    arith::MinUIOp::create(builder, l, a->value, b->value));
  else
    v = isMax ? mlir::Value(
                    arith::MaxSIOp::create(builder, l, a->value, b->value))
              : mlir::Value(
                    arith::MinSIOp::create(builder, l, a->value, b->value));
  return FValue::runtime(v, a->type);
}
std::optional<FValue> maximum(Emitter &e, const CallArgs &args) {
  return minMax(e, args, true);
}
std::optional<FValue> minimum(Emitter &e, const CallArgs &args) {
  return minMax(e, args, false);
}

std::optional<FValue> cdiv(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "div"};
  ArgReader r(e, args, "cdiv", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0) || !r.get(1))
    return r.missing(r.get(0) ? 1 : 0);
  std::optional<FValue> sum = e.binary("+", *r.get(0), *r.get(1), args.loc);
  std::optional<FValue> minusOne =
      sum ? e.binary("-", *sum, FValue::integer(1), args.loc) : std::nullopt;
  return minusOne ? e.binary("//", *minusOne, *r.get(1), args.loc)
                  : std::nullopt;
}

/// tl.swizzle2d(i, j, size_i, size_j, size_g): the (i, j) of a row-major
/// size_i x size_j grid renumbered column-major within each group of size_g
/// rows (the last group may be shorter), as upstream's; the grouped
/// program-id order of matmul kernels. Works on scalars and blocks alike.
std::optional<FValue> swizzle2d(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"i", "j", "size_i", "size_j", "size_g"};
  ArgReader r(e, args, "tl.swizzle2d", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t k = 0; k < 5; ++k) {
    const FValue *v = r.get(k);
    if (!v)
      return r.missing(k);
    bool isInteger = v->isRuntime()
                         ? !v->type.isPointer && !v->type.isBlockPointer() &&
                               v->type.element.isInteger() &&
                               !v->type.element.isBool()
                         : v->isInt();
    if (!isInteger)
      return r.bad(k, "an integer or a block of integers");
  }
  const FValue &i = *r.get(0), &j = *r.get(1), &sizeI = *r.get(2),
               &sizeJ = *r.get(3), &sizeG = *r.get(4);
  SMLoc loc = args.loc;
  auto bin = [&](StringRef op, const std::optional<FValue> &a,
                 const std::optional<FValue> &b) -> std::optional<FValue> {
    return a && b ? e.binary(op, *a, *b, loc) : std::nullopt;
  };
  // The linear index, the group it falls in and the group's first row.
  std::optional<FValue> ij = bin("+", bin("*", i, sizeJ), j);
  std::optional<FValue> groupSize = bin("*", sizeG, sizeJ);
  std::optional<FValue> firstRow = bin("*", bin("//", ij, groupSize), sizeG);
  // The rows of this group: tl.minimum, which gives a run-time value even
  // on compile-time operands, as upstream's does.
  std::optional<FValue> rowsLeft = bin("-", sizeI, firstRow);
  rowsLeft = rowsLeft ? e.materialize(*rowsLeft, loc) : std::nullopt;
  if (!rowsLeft)
    return std::nullopt;
  CallArgs pair;
  pair.loc = loc;
  pair.callee = "minimum";
  pair.args = {*rowsLeft, sizeG};
  pair.argLocs = {loc, r.loc(4)};
  std::optional<FValue> rows = minimum(e, pair);
  std::optional<FValue> inGroup = bin("%", ij, groupSize);
  std::optional<FValue> newI = bin("+", firstRow, bin("%", inGroup, rows));
  std::optional<FValue> newJ = bin("//", inGroup, rows);
  if (!newI || !newJ)
    return std::nullopt;
  return FValue::tuple({*newI, *newJ});
}

/// triton.next_power_of_2(n): the smallest power of two >= n (1 for n <= 1),
/// for heuristics and constexpr arithmetic.
std::optional<FValue> nextPowerOf2(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"n"};
  ArgReader r(e, args, "triton.next_power_of_2", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  if (!r.get(0)->isInt())
    return e.error(r.loc(0), "triton.next_power_of_2 needs a compile-time "
                             "int, got " +
                                 r.get(0)->describe());
  int64_t n = r.get(0)->intValue;
  if (n > (int64_t(1) << 62))
    return e.error(r.loc(0), "triton.next_power_of_2 of " + std::to_string(n) +
                                 " does not fit 64 bits");
  return FValue::integer(n <= 1 ? 1 : int64_t(llvm::PowerOf2Ceil(uint64_t(n))));
}

/// triton.language.standard._log2(n): the floor of log2 of a compile-time
/// int (0 for n <= 1), a private upstream helper that kernels import for
/// bitonic sorts.
std::optional<FValue> log2Floor(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"i"};
  ArgReader r(e, args, "tl._log2", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  if (!r.get(0)->isInt())
    return r.bad(0, "a compile-time int");
  int64_t n = r.get(0)->intValue;
  return FValue::integer(n <= 1 ? 0 : int64_t(llvm::Log2_64(uint64_t(n))));
}

/// Python's math module on compile-time numbers (module-level constants such
/// as `constexpr(math.sqrt(2.0 / math.pi))`): math.NAME(x) for one-argument
/// functions; floor and ceil give ints, as in Python.
std::optional<FValue> hostMath(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x"};
  std::string name = args.callee;
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  const FValue &x = *r.get(0);
  if (!x.isNumber())
    return e.error(r.loc(0), name + " needs a compile-time number, got " +
                                 x.describe() +
                                 "; on run-time values use the tl. function");
  double v = x.kind == FValue::Kind::Float ? x.floatValue : double(x.intValue);
  StringRef fn = StringRef(name).drop_front(strlen("math."));
  if (fn == "floor" || fn == "ceil" || fn == "trunc") {
    double r = fn == "floor"  ? std::floor(v)
               : fn == "ceil" ? std::ceil(v)
                              : std::trunc(v);
    if (!std::isfinite(r))
      return e.error(args.loc,
                     name + " of " + std::to_string(v) + " is not an integer");
    return FValue::integer(int64_t(r));
  }
  bool domainOk = true;
  double out = 0;
  if (fn == "sqrt") {
    domainOk = v >= 0;
    out = std::sqrt(v);
  } else if (fn == "exp") {
    out = std::exp(v);
  } else if (fn == "log" || fn == "log2" || fn == "log10") {
    domainOk = v > 0;
    out = fn == "log"    ? std::log(v)
          : fn == "log2" ? std::log2(v)
                         : std::log10(v);
  } else if (fn == "fabs") {
    out = std::fabs(v);
  } else if (fn == "sin") {
    out = std::sin(v);
  } else if (fn == "cos") {
    out = std::cos(v);
  } else if (fn == "tanh") {
    out = std::tanh(v);
  } else {
    return e.error(args.loc, "'" + name + "' is not supported by Kiln yet");
  }
  if (!domainOk)
    return e.error(r.loc(0),
                   name + " of " + std::to_string(v) + ": math domain error");
  return FValue::floating(out);
}

/// Hints for the axis analysis (`tl.multiple_of(x, 16)`, ...): the value
/// passes through unchanged, and the op that defines it carries the facts
/// (one per dimension; one int applies to all), which AxisInfo takes instead
/// of what it derives, as upstream's hints are taken: they decide the width
/// of vector loads and stores.
static std::optional<FValue> hint(Emitter &e, const CallArgs &args,
                                  StringRef name, StringRef attrName) {
  static const StringRef kParams[] = {"input", "values"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  if (!r.get(1))
    return r.missing(1);
  const FValue &input = *r.get(0);
  if (!input.isRuntime())
    return input; // a compile-time number needs no hint
  if (input.type.isBlockPointer())
    return r.bad(0, "an integer, float or pointer value");
  llvm::SmallVector<int64_t> values;
  const FValue &given = *r.get(1);
  auto add = [&](const FValue &v) {
    if (v.kind != FValue::Kind::Int || v.intValue < 1)
      return false;
    values.push_back(v.intValue);
    return true;
  };
  bool ok = given.kind == FValue::Kind::Tuple
                ? llvm::all_of(given.elements, add) && !given.elements.empty()
                : add(given);
  if (!ok)
    return r.bad(1, "a positive compile-time int or a tuple of them");
  size_t rank = std::max<size_t>(1, input.type.shape.size());
  if (values.size() == 1)
    values.assign(rank, values.front());
  if (values.size() != rank)
    return e.error(r.loc(1), name + " got " + std::to_string(values.size()) +
                                 " values for a value of rank " +
                                 std::to_string(rank));
  // Upstream takes hints on floats too; they say nothing of addresses.
  if (!input.type.isPointer && input.type.element.isFloat())
    return input;
  // A block argument (a parameter, a loop-carried value) has no op to carry
  // the facts; the hint is then dropped, which is always correct.
  if (mlir::Operation *op = input.value.getDefiningOp())
    if (op->getNumResults() == 1)
      op->setAttr(attrName, e.getBuilder().getDenseI64ArrayAttr(values));
  return input;
}

std::optional<FValue> multipleOf(Emitter &e, const CallArgs &args) {
  return hint(e, args, "tl.multiple_of", "kiln.divisibility");
}
std::optional<FValue> maxContiguous(Emitter &e, const CallArgs &args) {
  return hint(e, args, "tl.max_contiguous", "kiln.contiguity");
}
std::optional<FValue> maxConstancy(Emitter &e, const CallArgs &args) {
  return hint(e, args, "tl.max_constancy", "kiln.constancy");
}

/// `tl.assume(cond)`: a fact for the optimizer (upstream passes it to LLVM
/// as llvm.assume). Kiln's analyses do not read it yet, so the condition is
/// checked to be a boolean scalar and dropped, which is always correct.
std::optional<FValue> assume(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"cond"};
  ArgReader r(e, args, "tl.assume", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *cond = r.get(0);
  if (!cond)
    return r.missing(0);
  if (cond->isRuntime() && (cond->type.isBlock() || cond->type.isPointer ||
                            cond->type.element.getKind() != ScalarKind::I1))
    return r.bad(0, "a boolean scalar");
  if (!cond->isRuntime() && !cond->isNumber())
    return r.bad(0, "a boolean scalar");
  return FValue::none();
}

std::optional<FValue> staticAssert(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"cond", "msg"};
  ArgReader r(e, args, "tl.static_assert", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *cond = r.get(0);
  if (!cond)
    return r.missing(0);
  std::optional<FValue> folded = foldedInteger(*cond);
  if (folded)
    cond = &*folded;
  if (cond->isRuntime())
    return r.bad(0, "a compile-time condition");
  bool truth = cond->isNumber() ? cond->intValue != 0 || cond->floatValue != 0
                                : !cond->isNone();
  if (!truth) {
    std::string message = "static assertion failed";
    if (const FValue *msg = r.get(1))
      message += ": " + msg->text;
    return e.error(args.loc, message);
  }
  return FValue::none();
}

std::optional<FValue> ignoredInRelease(Emitter &e, const CallArgs &args) {
  (void)e;
  (void)args;
  return FValue::none();
}

} // namespace

bool kiln::frontend::emitDeviceAssert(Emitter &e, const FValue &condition,
                                      const std::string &message, SMLoc loc,
                                      SMLoc condLoc) {
  std::optional<FValue> cond = e.materialize(condition, condLoc);
  if (!cond)
    return false;
  if (cond->type.isPointer || cond->type.isBlockPointer())
    return e.error(condLoc, "an assertion needs a condition (bool or number), "
                            "not a pointer"),
           false;
  if (!cond->type.element.isBool())
    cond = e.binary("!=", *cond, FValue::integer(0), condLoc);
  if (!cond)
    return false;
  mlir::Location location = e.location(loc);
  std::string file = "<unknown>";
  unsigned line = 0;
  if (auto fileLoc = mlir::dyn_cast<mlir::FileLineColLoc>(location)) {
    file = fileLoc.getFilename().str();
    line = fileLoc.getLine();
  }
  std::string function = "<kernel>";
  // A loop body the emitter probes first sits in a detached block: no
  // parent op, and no function name to give.
  mlir::Operation *parent = e.getBuilder().getInsertionBlock()->getParentOp();
  auto func = mlir::dyn_cast_or_null<mlir::func::FuncOp>(parent);
  if (!func && parent)
    func = parent->getParentOfType<mlir::func::FuncOp>();
  if (func)
    function = func.getSymName().str();
  kiln::AssertOp::create(e.getBuilder(), location, cond->value, message, file,
                         line, function);
  return true;
}

namespace {

/// tl.device_print(prefix, *args, hex=False): kept in every build, as
/// upstream prints whatever its debug setting.
std::optional<FValue> devicePrint(Emitter &e, const CallArgs &args) {
  if (args.args.empty() || args.args[0].kind != FValue::Kind::String)
    return e.error(args.loc, "tl.device_print needs a prefix string first, "
                             "as in tl.device_print(\"x: \", x)");
  bool hex = false;
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    const auto &[name, value] = args.keywords[k];
    if (name != "hex")
      return e.error(args.keywordLocs[k], "tl.device_print has no keyword '" +
                                              name + "' (it takes hex=)");
    if (!value.isNumber())
      return e.error(args.keywordLocs[k],
                     "hex= must be a compile-time bool, got " +
                         value.describe());
    hex = value.intValue != 0;
  }
  // Upstream separates a prefix from what precedes it with a space.
  std::string prefix = args.args[0].text;
  if (!prefix.empty() && prefix[0] != ' ')
    prefix = " " + prefix;
  llvm::SmallVector<mlir::Value> values;
  llvm::SmallVector<bool> isSigned;
  for (size_t i = 1; i < args.args.size(); ++i) {
    std::optional<FValue> v = e.materialize(args.args[i], args.argLocs[i]);
    if (!v)
      return std::nullopt;
    if (v->type.isBlockPointer())
      return e.error(args.argLocs[i], "tl.device_print cannot print block "
                                      "pointers; print the offsets instead");
    values.push_back(v->value);
    isSigned.push_back(!v->type.isPointer && v->type.element.isSigned() &&
                       !v->type.element.isBool());
  }
  kiln::PrintOp::create(e.getBuilder(), e.location(args.loc), prefix, hex,
                        isSigned, values);
  return FValue::none();
}

/// tl.device_assert(cond, msg="", mask=None): a kiln.assert in debug builds
/// (kilnc --debug), nothing otherwise, as upstream with and without debug.
std::optional<FValue> deviceAssert(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"cond", "msg", "mask"};
  ArgReader r(e, args, "tl.device_assert", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  std::string message;
  if (const FValue *msg = r.get(1)) {
    if (msg->kind != FValue::Kind::String)
      return r.bad(1, "a string");
    message = msg->text;
  }
  if (!e.debugEnabled())
    return FValue::none();
  std::optional<FValue> cond = *r.get(0);
  if (const FValue *mask = r.get(2)) {
    // Masked-off elements pass: cond | ~mask.
    std::optional<FValue> asBool = e.materialize(*cond, r.loc(0));
    if (asBool && !asBool->type.element.isBool())
      asBool = e.binary("!=", *asBool, FValue::integer(0), r.loc(0));
    std::optional<FValue> off =
        asBool ? e.unary("~", *mask, r.loc(2)) : std::nullopt;
    cond = off ? e.binary("|", *asBool, *off, r.loc(2)) : std::nullopt;
    if (!cond)
      return std::nullopt;
  }
  if (!emitDeviceAssert(e, *cond, message, args.loc, r.loc(0)))
    return std::nullopt;
  return FValue::none();
}

/// tl.debug_barrier(): a barrier across the program's threads, as upstream
/// (despite the name, it is kept in every build).
std::optional<FValue> debugBarrier(Emitter &e, const CallArgs &args) {
  if (!args.args.empty() || !args.keywords.empty())
    return e.error(args.loc, "tl.debug_barrier() takes no arguments");
  kiln::BarrierOp::create(e.getBuilder(), e.location(args.loc));
  return FValue::none();
}

std::optional<FValue> methodTo(Emitter &e, const CallArgs &args) {
  // tl.cast names its first parameter `input`; x.to(...) `self`.
  if (args.callee == "tl.cast" || args.callee == "cast")
    for (size_t k = 0; k < args.keywords.size(); ++k)
      if (args.keywords[k].first == "input") {
        CallArgs renamed = args;
        renamed.keywords[k].first = "self";
        renamed.callee = "tl.cast.input";
        return methodTo(e, renamed);
      }
  static const StringRef kParams[] = {"self", "dtype", "fp_downcast_rounding",
                                      "bitcast"};
  ArgReader r(e, args, ".to", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  const FValue &self = *r.get(0);
  const FValue *dtype = r.get(1);
  if (!dtype || dtype->kind != FValue::Kind::DType)
    return r.bad(1, "a dtype such as tl.float32");
  // A number converts as the literal it is (int → i32 or i64, float → fp32),
  // as Triton's tl.cast(0, tl.int64) does.
  std::optional<FValue> literal;
  if (self.isNumber() && !dtype->type.isPointer) {
    literal = e.materialize(self, r.loc(0));
    if (!literal)
      return std::nullopt;
  }
  const FValue &input = literal ? *literal : self;
  if (!input.isRuntime() || input.type.isBlockPointer())
    return r.bad(0, "a tensor");
  const TritonType &to = dtype->type;
  bool bitcast = r.get(3) && r.get(3)->isNumber() && r.get(3)->intValue;
  if (bitcast || input.type.isPointer || to.isPointer) {
    if (r.get(2))
      return e.error(r.loc(2), "fp_downcast_rounding applies only to "
                               "narrowing floating-point conversions");
    // Pointer to int1 is a null test, as in Triton.
    if (!bitcast && input.type.isPointer && !to.isPointer &&
        to.element.isBool()) {
      std::optional<FValue> addr = e.bitcastTo(
          input, TritonType{DType(ScalarKind::I64), false, {}}, args.loc);
      if (!addr)
        return std::nullopt;
      return e.castTo(*addr, to.element, args.loc);
    }
    return e.bitcastTo(input, to, args.loc);
  }
  DType from = input.type.element;
  // Upstream converts to fp8e4b15 from fp16 and fp32 only.
  if (to.element.getKind() == ScalarKind::F8E4B15 && from != to.element &&
      from.getKind() != ScalarKind::F16 && from.getKind() != ScalarKind::F32)
    return e.error(args.loc, "cannot convert " + input.type.scalar().str() +
                                 " to fp8e4b15: it converts from fp16 and "
                                 "fp32 only (as in Triton)");
  if ((from.isFp8() && to.element.isInteger()) ||
      (from.isInteger() && to.element.isFp8()))
    return e.error(args.loc, "cannot convert " + input.type.scalar().str() +
                                 " to " + to.str() +
                                 " directly; go through a 16- or 32-bit "
                                 "float type");
  if (const FValue *rounding = r.get(2)) {
    if (rounding->kind != FValue::Kind::String ||
        (rounding->text != "rtne" && rounding->text != "rtz"))
      return r.bad(2, "\"rtne\" or \"rtz\"");
    // Converting to the same type is no conversion (Triton returns the
    // value before it looks at the rounding mode).
    if (from == to.element)
      return input;
    if (!from.isFloat() || !to.element.isFloat() ||
        to.element.getBitWidth() >= from.getBitWidth())
      return e.error(r.loc(2), "fp_downcast_rounding applies only to "
                               "narrowing floating-point conversions, not " +
                                   input.type.scalar().str() + " to " +
                                   to.str());
    if (rounding->text == "rtz") {
      // fp32 to fp8e5 toward zero: fp8e5 is fp16's high byte, so fp16
      // toward zero, truncated (upstream's only rtz conversion to fp8).
      bool toE5 = to.element.getKind() == ScalarKind::F8E5 &&
                  from.getKind() == ScalarKind::F32;
      if (to.element.getBitWidth() == 8 && !toE5)
        return e.error(r.loc(2), "fp_downcast_rounding=\"rtz\" to fp8 is "
                                 "supported only from fp32 to fp8e5 (as in "
                                 "Triton), not from " +
                                     input.type.scalar().str() + " to " +
                                     to.str());
      TritonType result = input.type;
      result.element = toE5 ? DType(ScalarKind::F16) : to.element;
      auto mode = mlir::arith::RoundingModeAttr::get(
          e.getContext(), mlir::arith::RoundingMode::toward_zero);
      mlir::Value v = mlir::arith::TruncFOp::create(
          e.getBuilder(), e.location(args.loc), result.toMLIR(e.getContext()),
          input.value, mode, mlir::arith::FastMathFlagsAttr());
      FValue narrowed = FValue::runtime(v, result);
      if (!toE5)
        return narrowed;
      TritonType bits16 = result, bits8 = result;
      bits16.element = DType(ScalarKind::I16);
      bits8.element = DType(ScalarKind::I8);
      std::optional<FValue> bits = e.bitcastTo(narrowed, bits16, args.loc);
      std::optional<FValue> high =
          bits ? e.binary(">>", *bits, FValue::integer(8), args.loc)
               : std::nullopt;
      if (!high)
        return std::nullopt;
      FValue byte = e.castTo(*high, DType(ScalarKind::I8), args.loc);
      TritonType out = result;
      out.element = to.element;
      return e.bitcastTo(byte, out, args.loc);
    }
  }
  return e.castTo(input, to.element, args.loc);
}

/// tl.pointer_type(element_ty): the dtype of pointers to `element_ty`.
std::optional<FValue> pointerType(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"element_ty", "address_space", "const"};
  ArgReader r(e, args, "tl.pointer_type", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *element = r.get(0);
  if (!element || element->kind != FValue::Kind::DType ||
      element->type.isPointer)
    return r.bad(0, "a scalar dtype such as tl.float32");
  if (r.get(1) && !(r.get(1)->isInt() && r.get(1)->intValue == 1))
    return r.bad(1, "1 (global memory)");
  TritonType t = element->type;
  t.isPointer = true;
  return FValue::dtype(t);
}

/// triton.constexpr_function(f) called, not as a decorator
/// (`get_int_dtype = triton.constexpr_function(core.get_int_dtype)`): f
/// itself, as Kiln runs every compile-time call at compile time already.
std::optional<FValue> constexprFunction(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"fn"};
  ArgReader r(e, args, "triton.constexpr_function", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *fn = r.get(0);
  if (!fn)
    return r.missing(0);
  if (fn->kind != FValue::Kind::Builtin && fn->kind != FValue::Kind::Function)
    return r.bad(0, "a function");
  return *fn;
}

/// tl.core.get_int_dtype(bitwidth, signed): the integer dtype of that width.
std::optional<FValue> getIntDType(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"bitwidth", "signed"};
  ArgReader r(e, args, "tl.get_int_dtype", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *bits = r.get(0);
  if (!bits)
    return r.missing(0);
  const FValue *sign = r.get(1);
  if (!sign)
    return r.missing(1);
  if (!sign->isNumber())
    return r.bad(1, "a compile-time bool");
  static const ScalarKind kSigned[] = {ScalarKind::I8, ScalarKind::I16,
                                       ScalarKind::I32, ScalarKind::I64};
  static const ScalarKind kUnsigned[] = {ScalarKind::U8, ScalarKind::U16,
                                         ScalarKind::U32, ScalarKind::U64};
  int index = !bits->isInt()         ? -1
              : bits->intValue == 8  ? 0
              : bits->intValue == 16 ? 1
              : bits->intValue == 32 ? 2
              : bits->intValue == 64 ? 3
                                     : -1;
  if (index < 0)
    return r.bad(0, "8, 16, 32 or 64");
  DType dtype(sign->intValue ? kSigned[index] : kUnsigned[index]);
  return FValue::dtype(TritonType{dtype, false, {}});
}

/// tl.constexpr(value): a compile-time value, as is.
std::optional<FValue> constexprCall(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 1 || !args.keywords.empty())
    return e.error(args.loc, "tl.constexpr takes one value");
  if (args.args[0].isRuntime())
    return e.error(args.argLocs[0], "tl.constexpr needs a compile-time value, "
                                    "got " +
                                        args.args[0].describe());
  return args.args[0];
}

/// dtype.is_int(), dtype.is_fp16(), ...: compile-time predicates on a dtype
/// (the receiver); int1 counts as unsigned, as in Triton.
std::optional<FValue> dtypePredicate(Emitter &e, const CallArgs &args) {
  const TritonType &t = args.args[0].type;
  StringRef name = args.callee;
  if (args.args.size() != 1 || !args.keywords.empty())
    return e.error(args.loc, "dtype." + name + "() takes no arguments");
  DType d = t.element;
  bool ptr = t.isPointer;
  ScalarKind k = d.getKind();
  auto is = [&](ScalarKind kind) { return !ptr && k == kind; };
  bool fp8 = !ptr && d.isFp8();
  bool v = llvm::StringSwitch<bool>(name)
               .Case("is_ptr", ptr)
               .Case("is_floating", !ptr && d.isFloat())
               .Case("is_standard_floating", !ptr && d.isFloat() && !fp8)
               .Case("is_int", !ptr && d.isInteger())
               .Case("is_int_signed", !ptr && d.isSignedInteger())
               .Case("is_int_unsigned", !ptr && (d.isUnsigned() || d.isBool()))
               .Cases({"is_bool", "is_int1"}, is(ScalarKind::I1))
               .Case("is_int8", is(ScalarKind::I8))
               .Case("is_int16", is(ScalarKind::I16))
               .Case("is_int32", is(ScalarKind::I32))
               .Case("is_int64", is(ScalarKind::I64))
               .Case("is_uint8", is(ScalarKind::U8))
               .Case("is_uint16", is(ScalarKind::U16))
               .Case("is_uint32", is(ScalarKind::U32))
               .Case("is_uint64", is(ScalarKind::U64))
               .Case("is_fp8", fp8)
               .Case("is_fp8e4nv", is(ScalarKind::F8E4NV))
               .Case("is_fp8e5", is(ScalarKind::F8E5))
               .Case("is_fp8e4b15", is(ScalarKind::F8E4B15))
               .Case("is_fp16", is(ScalarKind::F16))
               .Case("is_bf16", is(ScalarKind::BF16))
               .Case("is_fp32", is(ScalarKind::F32))
               .Case("is_fp64", is(ScalarKind::F64))
               .Default(false);
  return FValue::boolean(v);
}

/// dtype.is_block(), dtype.get_block_shapes(), dtype.get_int_max_value(),
/// dtype.get_int_min_value(): the other methods of upstream's dtype and
/// block_type.
std::optional<FValue> dtypeMethod(Emitter &e, const CallArgs &args) {
  const TritonType &t = args.args[0].type;
  StringRef name = args.callee;
  if (args.args.size() != 1 || !args.keywords.empty())
    return e.error(args.loc, "dtype." + name + "() takes no arguments");
  if (name == "is_block")
    return FValue::boolean(t.isBlock());
  if (name == "get_block_shapes") {
    std::vector<FValue> dims;
    for (int64_t d : t.shape)
      dims.push_back(FValue::integer(d));
    return FValue::tuple(std::move(dims));
  }
  DType d = t.element;
  bool scalar = !t.isPointer && !t.isBlock();
  // Upstream's dtype names (`int32`, `fp32`) and their C-like spelling.
  if (name == "codegen_name" || name == "mangle") {
    if (!scalar)
      return FValue::string(t.str());
    std::string upstreamName = upstreamDTypeName(d);
    if (name == "mangle" && d.isInteger())
      return FValue::string((d.isSignedInteger() ? "i" : "u") +
                            std::to_string(d.getBitWidth()));
    if (name == "mangle")
      return FValue::string(upstreamName);
    StringRef n = upstreamName;
    if (n.consume_front("fp"))
      return FValue::string("float" + n.str());
    if (n.consume_front("bf"))
      return FValue::string("bfloat" + n.str());
    return FValue::string(upstreamName);
  }
  // dtype.KIND members, as named values that compare with tl.dtype.KIND.*.
  if (name == "kind") {
    if (!scalar)
      return e.error(args.loc, "dtype.kind() needs a scalar dtype, got " +
                                   args.args[0].describe());
    return FValue::named(FValue::Kind::Builtin,
                         d.isBool()      ? "tl.dtype.KIND.BOOLEAN"
                         : d.isInteger() ? "tl.dtype.KIND.INTEGRAL"
                                         : "tl.dtype.KIND.FLOATING");
  }
  // Kiln has no void, fp8e4b8 or fp8e5b16 values (AMD's fp8 types).
  if (name == "is_void" || name == "is_fp8e4b8" || name == "is_fp8e5b16")
    return FValue::boolean(false);
  if (t.isPointer || t.isBlock() || !d.isInteger())
    return e.error(args.loc, "dtype." + name +
                                 "() needs an integer dtype, got " +
                                 args.args[0].describe());
  unsigned bits = d.getBitWidth();
  bool isMax = name == "get_int_max_value";
  if (d.isSignedInteger())
    return FValue::integer(isMax ? int64_t(~0ull >> (65 - bits))
                                 : -int64_t(~0ull >> (65 - bits)) - 1);
  // Unsigned (int1 included); uint64's maximum wraps to -1, the same bits.
  return FValue::integer(isMax ? int64_t(~0ull >> (64 - bits)) : 0);
}

/// getattr(x, "name"[, default]) and hasattr(x, "name"), the name a
/// compile-time string.
std::optional<FValue> pyGetAttr(Emitter &e, const CallArgs &args) {
  bool has = args.callee == "hasattr";
  size_t n = args.args.size();
  if (!args.keywords.empty() || n < 2 || n > (has ? 2u : 3u) ||
      args.args[1].kind != FValue::Kind::String)
    return e.error(args.loc,
                   args.callee +
                       " takes a value and an attribute name (a compile-time "
                       "string)" +
                       (has ? "" : ", and optionally a default"));
  StringRef name = args.args[1].text;
  if (n == 2 && !has)
    return e.getAttribute(args.args[0], name, args.argLocs[1]);
  std::optional<FValue> found =
      e.findAttribute(args.args[0], name, args.argLocs[1]);
  if (has)
    return FValue::boolean(found.has_value());
  return found ? *found : args.args[2];
}

/// tl.dtype("fp32"): the dtype of one of upstream's names (those that
/// `x.dtype.name` gives).
std::optional<FValue> dtypeConstructor(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 1 || !args.keywords.empty() ||
      args.args[0].kind != FValue::Kind::String)
    return e.error(args.loc, "tl.dtype takes one dtype name (a string such "
                             "as \"fp32\" or \"int8\")");
  StringRef text = args.args[0].text;
  std::optional<DType> d = DType::parse(text);
  if (!d || upstreamDTypeName(*d) != text)
    return e.error(args.argLocs[0],
                   "'" + text +
                       "' is not a dtype name (int1, int8..int64, "
                       "uint8..uint64, fp8e4nv, fp8e5, fp8e4b15, fp16, bf16, "
                       "fp32, fp64)");
  return FValue::dtype(TritonType{*d, false, {}});
}

/// tl.add, tl.sub, tl.mul(x, y, sanitize_overflow=True): the operators as
/// functions (overflow checks are a debug-mode feature Kiln leaves out).
std::optional<FValue> arithmeticFunction(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "y", "sanitize_overflow"};
  std::string name = "tl." + args.callee;
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i)
    if (!r.get(i))
      return r.missing(i);
  StringRef op = args.callee == "add"   ? "+"
                 : args.callee == "sub" ? "-"
                                        : "*";
  return e.binary(op, *r.get(0), *r.get(1), args.loc);
}

/// The Python operator a tensor's special method stands for (`x.__rshift__(4)`
/// is `x >> 4`, FLASHNN's int4 unpacking), and where the receiver goes: the
/// left operand, the right one (the reflected `__r*__` forms) or the only one.
enum class Receiver { Left, Right, Only };
struct OperatorMethod {
  StringRef method, op;
  Receiver receiver = Receiver::Left;
};

constexpr Receiver kRight = Receiver::Right, kOnly = Receiver::Only;
constexpr OperatorMethod kOperatorMethods[] = {
    {"__add__", "+"},
    {"__radd__", "+", kRight},
    {"__sub__", "-"},
    {"__rsub__", "-", kRight},
    {"__mul__", "*"},
    {"__rmul__", "*", kRight},
    {"__truediv__", "/"},
    {"__rtruediv__", "/", kRight},
    {"__floordiv__", "//"},
    {"__rfloordiv__", "//", kRight},
    {"__mod__", "%"},
    {"__rmod__", "%", kRight},
    {"__pow__", "**"},
    {"__rpow__", "**", kRight},
    {"__and__", "&"},
    {"__rand__", "&", kRight},
    {"__or__", "|"},
    {"__ror__", "|", kRight},
    {"__xor__", "^"},
    {"__rxor__", "^", kRight},
    {"__lshift__", "<<"},
    {"__rlshift__", "<<", kRight},
    {"__rshift__", ">>"},
    {"__rrshift__", ">>", kRight},
    {"__lt__", "<"},
    {"__le__", "<="},
    {"__gt__", ">"},
    {"__ge__", ">="},
    {"__eq__", "=="},
    {"__ne__", "!="},
    {"__neg__", "-", kOnly},
    {"__pos__", "+", kOnly},
    {"__invert__", "~", kOnly},
    {"__not__", "not", kOnly},
};

/// x.__op__(...) for the operator methods above: what the operator does.
std::optional<FValue> operatorMethod(Emitter &e, const CallArgs &args) {
  const OperatorMethod &m = *llvm::find_if(
      kOperatorMethods, [&](auto &m) { return m.method == args.callee; });
  bool unary = m.receiver == Receiver::Only;
  if (!args.keywords.empty() || args.args.size() != (unary ? 1u : 2u))
    return e.error(args.loc, args.callee + (unary ? " takes no arguments"
                                                  : " takes one value"));
  if (unary)
    return e.unary(m.op, args.args[0], args.loc);
  bool right = m.receiver == Receiver::Right;
  return e.pythonOperator(m.op, args.args[right ? 1 : 0],
                          args.args[right ? 0 : 1], args.loc);
}

/// x.logical_and(y), x.logical_or(y): both sides as booleans (non-zero),
/// combined.
std::optional<FValue> logicalMethod(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 2 || !args.keywords.empty())
    return e.error(args.loc, args.callee + " takes one other value");
  std::optional<FValue> sides[2];
  for (int i = 0; i < 2; ++i) {
    sides[i] = e.binary("!=", args.args[i], FValue::integer(0), args.loc);
    if (!sides[i])
      return std::nullopt;
  }
  return e.binary(args.callee == "logical_and" ? "&" : "|", *sides[0],
                  *sides[1], args.loc);
}

/// tl.tuple(values) (and Python's tuple()): the values as a tuple.
std::optional<FValue> makeTuple(Emitter &e, const CallArgs &args) {
  if (!args.keywords.empty() || args.args.size() > 1)
    return e.error(args.loc, args.callee + " takes one iterable");
  if (args.args.empty())
    return FValue::tuple({});
  if (args.args[0].kind != FValue::Kind::Tuple)
    return e.error(args.argLocs[0], args.callee +
                                        " needs a tuple or list of values, "
                                        "got " +
                                        args.args[0].describe());
  return args.args[0];
}

/// int.bit_length() and int.bit_count() on a compile-time int.
std::optional<FValue> intMethod(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 1 || !args.keywords.empty())
    return e.error(args.loc, "int." + args.callee + "() takes no arguments");
  int64_t v = args.args[0].intValue;
  uint64_t magnitude = v < 0 ? 0 - uint64_t(v) : uint64_t(v);
  if (args.callee == "bit_length")
    return FValue::integer(64 - llvm::countl_zero(magnitude));
  return FValue::integer(llvm::popcount(magnitude));
}

/// Python's str methods on compile-time strings (a constexpr string
/// parameter: `ACTIVATION.startswith("gelu")`), as upstream's constexpr
/// forwards them to its value.
std::optional<FValue> strMethod(Emitter &e, const CallArgs &args) {
  StringRef text = args.args[0].text;
  StringRef name = args.callee;
  auto stringArg = [&](size_t i) -> std::optional<std::string> {
    if (i >= args.args.size() || args.args[i].kind != FValue::Kind::String) {
      e.error(args.loc, "str." + name + "() needs a string argument");
      return std::nullopt;
    }
    return args.args[i].text;
  };
  if (!args.keywords.empty())
    return e.error(args.loc, "str." + name + "() takes no keyword arguments");
  size_t n = args.args.size() - 1; // after the string itself
  if ((name == "upper" || name == "lower") && n == 0)
    return FValue::string(name == "upper" ? text.upper() : text.lower());
  if ((name == "strip" || name == "lstrip" || name == "rstrip") && n <= 1) {
    std::string chars = " \t\n\r\f\v";
    if (n == 1) {
      std::optional<std::string> c = stringArg(1);
      if (!c)
        return std::nullopt;
      chars = *c;
    }
    StringRef t = text;
    if (name != "rstrip")
      t = t.ltrim(chars);
    if (name != "lstrip")
      t = t.rtrim(chars);
    return FValue::string(t.str());
  }
  if ((name == "startswith" || name == "endswith") && n == 1) {
    // A prefix or a tuple of them.
    std::vector<FValue> options = args.args[1].kind == FValue::Kind::Tuple
                                      ? args.args[1].elements
                                      : std::vector<FValue>{args.args[1]};
    bool found = false;
    for (const FValue &o : options) {
      if (o.kind != FValue::Kind::String)
        return e.error(args.loc,
                       "str." + name + "() needs a string or a tuple of them");
      found |= name == "startswith" ? text.starts_with(o.text)
                                    : text.ends_with(o.text);
    }
    return FValue::boolean(found);
  }
  if ((name == "find" || name == "count") && n == 1) {
    std::optional<std::string> sub = stringArg(1);
    if (!sub)
      return std::nullopt;
    if (name == "find") {
      size_t at = text.find(*sub);
      return FValue::integer(at == StringRef::npos ? -1 : int64_t(at));
    }
    return FValue::integer(int64_t(text.count(*sub)));
  }
  if (name == "replace" && n == 2) {
    std::optional<std::string> from = stringArg(1), to = stringArg(2);
    if (!from || !to)
      return std::nullopt;
    if (from->empty())
      return e.error(args.loc, "str.replace() of an empty string is not "
                               "supported by Kiln");
    std::string out;
    StringRef rest = text;
    for (size_t at; (at = rest.find(*from)) != StringRef::npos;) {
      out += rest.take_front(at).str() + *to;
      rest = rest.drop_front(at + from->size());
    }
    return FValue::string(out + rest.str());
  }
  if (name == "split" && n <= 1) {
    llvm::SmallVector<StringRef> parts;
    if (n == 0) {
      text.split(parts, ' ', -1, /*KeepEmpty=*/false);
    } else {
      std::optional<std::string> sep = stringArg(1);
      if (!sep)
        return std::nullopt;
      if (sep->empty())
        return e.error(args.loc, "str.split() needs a non-empty separator");
      text.split(parts, *sep);
    }
    std::vector<FValue> items;
    for (StringRef p : parts)
      items.push_back(FValue::string(p.str()));
    return FValue::tuple(std::move(items));
  }
  return e.error(args.loc, "str." + name + "() with " + std::to_string(n) +
                               " argument(s) is not supported by Kiln");
}

//===--- Python builtins on compile-time values ---------------------------===//

std::optional<FValue> pyMinMax(Emitter &e, const CallArgs &args, bool isMax) {
  std::vector<FValue> items = args.args;
  if (items.size() == 1 && items[0].kind == FValue::Kind::Tuple)
    items = items[0].elements;
  if (items.empty())
    return e.error(args.loc, std::string(isMax ? "max" : "min") +
                                 "() needs at least one argument");
  // On run-time values, upstream's builtin min/max is a chain of
  // tl.minimum/tl.maximum (language.core.builtin_min).
  if (llvm::any_of(items, [](const FValue &v) { return v.isRuntime(); })) {
    if (items.size() < 2)
      return e.error(args.loc, std::string(isMax ? "max" : "min") +
                                   "() of run-time values needs at least two");
    FValue folded = items[0];
    for (size_t i = 1; i < items.size(); ++i) {
      CallArgs pair;
      pair.loc = args.loc;
      pair.callee = isMax ? "maximum" : "minimum";
      pair.args = {folded, items[i]};
      pair.argLocs = {args.loc, args.loc};
      std::optional<FValue> next = minMax(e, pair, isMax);
      if (!next)
        return std::nullopt;
      folded = *next;
    }
    return folded;
  }
  FValue best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    if (!best.isNumber() || !items[i].isNumber())
      return e.error(args.loc, std::string(isMax ? "max" : "min") +
                                   "() works on numbers and run-time values, "
                                   "got " +
                                   best.describe() + " and " +
                                   items[i].describe());
    std::optional<FValue> less = e.binary("<", items[i], best, args.loc);
    if (!less)
      return std::nullopt;
    if (bool(less->intValue) != isMax)
      best = items[i];
  }
  return best;
}
std::optional<FValue> pyMin(Emitter &e, const CallArgs &args) {
  return pyMinMax(e, args, false);
}
std::optional<FValue> pyMax(Emitter &e, const CallArgs &args) {
  return pyMinMax(e, args, true);
}
std::optional<FValue> pyLen(Emitter &e, const CallArgs &args) {
  if (args.args.size() == 1 && args.args[0].kind == FValue::Kind::String)
    return FValue::integer(int64_t(args.args[0].text.size()));
  if (args.args.size() != 1 || args.args[0].kind != FValue::Kind::Tuple)
    return e.error(args.loc, "len() needs one compile-time tuple or string");
  return FValue::integer(args.args[0].elements.size());
}
std::optional<FValue> pyInt(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 1 || !args.args[0].isNumber())
    return e.error(args.loc, "int() needs one compile-time number");
  const FValue &v = args.args[0];
  return FValue::integer(v.kind == FValue::Kind::Float ? int64_t(v.floatValue)
                                                       : v.intValue);
}
std::optional<FValue> pyFloat(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 1)
    return e.error(args.loc, "float() needs one argument");
  const FValue &v = args.args[0];
  if (v.kind == FValue::Kind::String) {
    std::string lowered = StringRef(v.text).trim().lower();
    StringRef s = lowered;
    if (s == "inf" || s == "+inf" || s == "infinity")
      return FValue::floating(std::numeric_limits<double>::infinity());
    if (s == "-inf" || s == "-infinity")
      return FValue::floating(-std::numeric_limits<double>::infinity());
    if (s == "nan")
      return FValue::floating(std::numeric_limits<double>::quiet_NaN());
    double d;
    if (!s.getAsDouble(d))
      return FValue::floating(d);
    return e.error(args.loc, "float() cannot parse \"" + v.text + "\"");
  }
  if (!v.isNumber())
    return e.error(args.loc, "float() needs a compile-time number or string");
  return FValue::floating(v.kind == FValue::Kind::Float ? v.floatValue
                                                        : double(v.intValue));
}

} // namespace

std::optional<llvm::SmallVector<int64_t>>
kiln::frontend::readShape(Emitter &e, const FValue &v, SMLoc loc,
                          StringRef what) {
  llvm::SmallVector<int64_t> shape;
  auto add = [&](const FValue &d) {
    if (!d.isInt() || d.intValue <= 0)
      return false;
    shape.push_back(d.intValue);
    return true;
  };
  bool ok =
      v.kind == FValue::Kind::Tuple ? llvm::all_of(v.elements, add) : add(v);
  if (!ok || shape.empty()) {
    e.error(loc, what +
                     " must be a positive compile-time int or a tuple of "
                     "them, got " +
                     v.describe());
    return std::nullopt;
  }
  for (int64_t d : shape)
    if (!llvm::isPowerOf2_64(uint64_t(d))) {
      e.error(loc, what + " dimensions must be powers of 2, got " +
                       std::to_string(d));
      return std::nullopt;
    }
  return shape;
}

void kiln::frontend::addCoreBuiltins(BuiltinTable &table) {
  static const std::pair<const char *, BuiltinFn> kEntries[] = {
      {"tl.program_id", programId},
      {"tl.num_programs", numPrograms},
      {"tl.arange", arange},
      {"tl.full", full},
      {"tl.zeros", zeros},
      {"tl.zeros_like", zerosLike},
      {"tl.full_like", fullLike},
      {"tl.where", where},
      {"tl.maximum", maximum},
      {"tl.minimum", minimum},
      {"tl.cdiv", cdiv},
      {"method.cdiv", cdiv},
      {"tl.swizzle2d", swizzle2d},
      {"triton.cdiv", cdiv},
      {"triton.next_power_of_2", nextPowerOf2},
      {"triton.constexpr_function", constexprFunction},
      {"tl._log2", log2Floor},
      {"math.sqrt", hostMath},
      {"math.exp", hostMath},
      {"math.log", hostMath},
      {"math.log2", hostMath},
      {"math.log10", hostMath},
      {"math.fabs", hostMath},
      {"math.sin", hostMath},
      {"math.cos", hostMath},
      {"math.tanh", hostMath},
      {"math.floor", hostMath},
      {"math.ceil", hostMath},
      {"math.trunc", hostMath},
      {"tl.assume", assume},
      {"tl.multiple_of", multipleOf},
      {"tl.max_contiguous", maxContiguous},
      {"tl.max_constancy", maxConstancy},
      {"tl.static_assert", staticAssert},
      {"tl.static_print", ignoredInRelease},
      {"tl.device_assert", deviceAssert},
      {"tl.device_print", devicePrint},
      {"tl.debug_barrier", debugBarrier},
      {"print", ignoredInRelease},
      {"method.to", methodTo},
      {"tl.cast", methodTo},
      {"method.cast", methodTo},
      {"tl.pointer_type", pointerType},
      {"tl.get_int_dtype", getIntDType},
      {"min", pyMin},
      {"max", pyMax},
      {"len", pyLen},
      {"int", pyInt},
      {"float", pyFloat},
  };
  for (const auto &[name, fn] : kEntries)
    table[name] = fn;
  table["tl.constexpr"] = constexprCall;
  table["tl.dtype"] = dtypeConstructor;
  table["getattr"] = pyGetAttr;
  table["hasattr"] = pyGetAttr;
  for (const char *predicate :
       {"is_ptr",    "is_floating",   "is_standard_floating",
        "is_int",    "is_int_signed", "is_int_unsigned",
        "is_bool",   "is_int1",       "is_int8",
        "is_int16",  "is_int32",      "is_int64",
        "is_uint8",  "is_uint16",     "is_uint32",
        "is_uint64", "is_fp8",        "is_fp8e4nv",
        "is_fp8e5",  "is_fp8e4b15",   "is_fp16",
        "is_bf16",   "is_fp32",       "is_fp64"})
    table[std::string("method.dtype.") + predicate] = dtypePredicate;
  for (const OperatorMethod &m : kOperatorMethods)
    table["method." + m.method.str()] = operatorMethod;
  table["method.logical_and"] = logicalMethod;
  table["method.logical_or"] = logicalMethod;
  for (const char *name : {"tl.add", "tl.sub", "tl.mul"})
    table[name] = arithmeticFunction;
  for (const char *name : {"tl.tuple", "tuple", "list"})
    table[name] = makeTuple;
  for (const char *m :
       {"upper", "lower", "strip", "lstrip", "rstrip", "startswith", "endswith",
        "find", "count", "replace", "split"})
    table[std::string("method.str.") + m] = strMethod;
  table["method.int.bit_length"] = intMethod;
  table["method.int.bit_count"] = intMethod;
  for (const char *method :
       {"is_block", "get_block_shapes", "get_int_max_value",
        "get_int_min_value", "codegen_name", "mangle", "kind", "is_void",
        "is_fp8e4b8", "is_fp8e5b16"})
    table[std::string("method.dtype.") + method] = dtypeMethod;
}

static const BuiltinTable &builtinTable() {
  static const BuiltinTable table = [] {
    BuiltinTable t;
    addCoreBuiltins(t);
    addShapeBuiltins(t);
    addReduceBuiltins(t);
    addMathBuiltins(t);
    addMemoryBuiltins(t);
    addDescriptorBuiltins(t); // after memory: wraps the atomic methods
    addRandomBuiltins(t);
    addScaledDotBuiltins(t); // after memory: calls tl.dot
    return t;
  }();
  return table;
}

std::optional<FValue> kiln::frontend::callBuiltin(
    Emitter &e, StringRef name, std::vector<FValue> positional,
    std::vector<std::pair<std::string, FValue>> keywords, SMLoc loc) {
  CallArgs call;
  call.loc = loc;
  call.callee = name.str();
  call.args = std::move(positional);
  call.argLocs.assign(call.args.size(), loc);
  call.keywords = std::move(keywords);
  call.keywordLocs.assign(call.keywords.size(), loc);
  return lookupBuiltin(name)(e, call);
}

BuiltinFn kiln::frontend::lookupBuiltin(StringRef name) {
  const auto &table = builtinTable();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}
