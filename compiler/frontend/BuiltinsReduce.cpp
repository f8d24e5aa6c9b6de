//===- BuiltinsReduce.cpp - reductions, scans and sort --------------------===//
//
// tl.sum/max/min/argmax/argmin/xor_sum/reduce and tl.cumsum/cumprod/
// associative_scan build kiln.reduce and kiln.scan, whose combine region is
// either emitted here (the standard combiners) or a @triton.jit function
// inlined into it. Result types follow upstream Triton: sum promotes
// integers narrower than 32 bits to (u)int32; max/min without indices
// promote everything narrower than 32 bits to int32/fp32; bf16 becomes fp32
// for max, min, cumsum and cumprod. tl.sort is a bitonic network over the
// block reshaped to a hypercube, as upstream's.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace kiln::frontend;

namespace {

/// The run-time block inputs of a reduction or scan: one tensor or a tuple.
std::optional<std::vector<FValue>> readInputs(Emitter &e, const FValue &v,
                                              SMLoc loc, StringRef builtin) {
  std::vector<FValue> inputs =
      v.kind == FValue::Kind::Tuple ? v.elements : std::vector<FValue>{v};
  if (inputs.empty())
    return e.error(loc, builtin + " needs at least one input");
  for (const FValue &in : inputs) {
    if (!in.isRuntime() || !in.type.isBlock() || in.type.isPointer)
      return e.error(loc, builtin + " needs a block of numbers, got " +
                              in.describe());
    if (in.type.shape != inputs[0].type.shape)
      return e.error(loc, builtin + " needs inputs of one shape, got " +
                              formatShape(inputs[0].type.shape) + " and " +
                              formatShape(in.type.shape));
  }
  return inputs;
}

/// Builds the combine region of `op` (kiln.reduce or kiln.scan) from
/// `combine` and terminates it with a `ReturnOp`.
template <typename ReturnOp>
bool buildCombineRegion(Emitter &e, mlir::Region &region,
                        llvm::ArrayRef<FValue> inputs, const CombineFn &combine,
                        SMLoc loc, StringRef builtin) {
  auto &b = e.getBuilder();
  mlir::OpBuilder::InsertionGuard guard(b);
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<mlir::Location> argLocs;
  for (int side = 0; side < 2; ++side)
    for (const FValue &in : inputs) {
      argTypes.push_back(in.type.element.toMLIR(e.getContext()));
      argLocs.push_back(e.location(loc));
    }
  mlir::Block *block = b.createBlock(&region, {}, argTypes, argLocs);
  std::vector<FValue> lhs, rhs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    lhs.push_back(
        FValue::runtime(block->getArgument(i), inputs[i].type.scalar()));
    rhs.push_back(FValue::runtime(block->getArgument(i + inputs.size()),
                                  inputs[i].type.scalar()));
  }
  std::optional<std::vector<FValue>> results = combine(e, lhs, rhs);
  if (!results)
    return false;
  if (results->size() != inputs.size()) {
    e.error(loc, "the combine function of " + builtin + " must return " +
                     std::to_string(inputs.size()) + " value(s), got " +
                     std::to_string(results->size()));
    return false;
  }
  llvm::SmallVector<mlir::Value> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FValue &r = (*results)[i];
    TritonType want = inputs[i].type.scalar();
    std::optional<FValue> v;
    if (r.isNumber())
      v = e.constant(r, want, loc);
    else if (r.isRuntime() && r.type == want)
      v = r;
    if (!v) {
      e.error(loc, "the combine function of " + builtin +
                       " must return scalars of type " + want.str() +
                       " (the input's element type), got " + r.describe());
      return false;
    }
    values.push_back(v->value);
  }
  ReturnOp::create(b, e.location(loc), values);
  return true;
}

/// A combine function given as a @triton.jit function: inlined with the
/// accumulated values then the next ones as arguments.
CombineFn jitCombine(const FValue &fn, SMLoc loc) {
  return [fn, loc](
             Emitter &e, llvm::ArrayRef<FValue> lhs,
             llvm::ArrayRef<FValue> rhs) -> std::optional<std::vector<FValue>> {
    CallArgs args;
    args.loc = loc;
    args.callee = fn.function ? fn.function->name : "combine_fn";
    for (llvm::ArrayRef<FValue> side : {lhs, rhs})
      for (const FValue &v : side) {
        args.args.push_back(v);
        args.argLocs.push_back(loc);
      }
    std::optional<FValue> result = e.call(fn, args);
    if (!result)
      return std::nullopt;
    if (result->kind == FValue::Kind::Tuple)
      return result->elements;
    return std::vector<FValue>{*result};
  };
}

/// One binary operator applied to each pair.
CombineFn operatorCombine(StringRef op, SMLoc loc) {
  std::string opName = op.str();
  return [opName, loc](
             Emitter &e, llvm::ArrayRef<FValue> lhs,
             llvm::ArrayRef<FValue> rhs) -> std::optional<std::vector<FValue>> {
    std::optional<FValue> r = e.binary(opName, lhs[0], rhs[0], loc);
    if (!r)
      return std::nullopt;
    return std::vector<FValue>{*r};
  };
}

/// Non-NaN-propagating maximum or minimum of two scalars of one type (as
/// tl.maximum/tl.minimum with the default propagate_nan).
FValue minMaxValue(Emitter &e, const FValue &a, const FValue &b, bool isMax,
                   SMLoc loc) {
  namespace arith = mlir::arith;
  auto &builder = e.getBuilder();
  mlir::Location l = e.location(loc);
  DType t = a.type.element;
  mlir::Value v;
  if (t.isFloat())
    v = isMax ? mlir::Value(
                    arith::MaxNumFOp::create(builder, l, a.value, b.value))
              : mlir::Value(
                    arith::MinNumFOp::create(builder, l, a.value, b.value));
  else if (t.isUnsigned() || t.isBool())
    v = isMax
            ? mlir::Value(arith::MaxUIOp::create(builder, l, a.value, b.value))
            : mlir::Value(arith::MinUIOp::create(builder, l, a.value, b.value));
  else
    v = isMax
            ? mlir::Value(arith::MaxSIOp::create(builder, l, a.value, b.value))
            : mlir::Value(arith::MinSIOp::create(builder, l, a.value, b.value));
  return FValue::runtime(v, a.type);
}

CombineFn minMaxCombine(bool isMax, SMLoc loc) {
  return [isMax, loc](
             Emitter &e, llvm::ArrayRef<FValue> lhs,
             llvm::ArrayRef<FValue> rhs) -> std::optional<std::vector<FValue>> {
    return std::vector<FValue>{minMaxValue(e, lhs[0], rhs[0], isMax, loc)};
  };
}

/// (value, index) pairs: keeps the greater (smaller) value; on ties, with
/// `tieBreakLeft`, the smaller index.
CombineFn argMinMaxCombine(bool isMax, bool tieBreakLeft, SMLoc loc) {
  return [=](Emitter &e, llvm::ArrayRef<FValue> lhs,
             llvm::ArrayRef<FValue> rhs) -> std::optional<std::vector<FValue>> {
    const FValue &v1 = lhs[0], &i1 = lhs[1], &v2 = rhs[0], &i2 = rhs[1];
    std::optional<FValue> better = e.binary(isMax ? ">" : "<", v1, v2, loc);
    if (!better)
      return std::nullopt;
    if (tieBreakLeft) {
      std::optional<FValue> eq = e.binary("==", v1, v2, loc);
      std::optional<FValue> lt = eq ? e.binary("<", i1, i2, loc) : std::nullopt;
      std::optional<FValue> tie =
          lt ? e.binary("&", *eq, *lt, loc) : std::nullopt;
      better = tie ? e.binary("|", *better, *tie, loc) : std::nullopt;
      if (!better)
        return std::nullopt;
    }
    auto &b = e.getBuilder();
    mlir::Location l = e.location(loc);
    mlir::Value v =
        mlir::arith::SelectOp::create(b, l, better->value, v1.value, v2.value);
    mlir::Value i =
        mlir::arith::SelectOp::create(b, l, better->value, i1.value, i2.value);
    return std::vector<FValue>{FValue::runtime(v, v1.type),
                               FValue::runtime(i, i1.type)};
  };
}

/// Reads an optional axis argument (None means all dimensions).
bool readOptionalAxis(Emitter &e, const ArgReader &r, size_t i, int64_t rank,
                      std::optional<int64_t> &axis, StringRef builtin) {
  const FValue *a = r.get(i);
  if (!a)
    return true;
  axis = readAxis(e, *a, rank, r.loc(i), "the axis of " + builtin.str());
  return axis.has_value();
}

bool readFlag(const ArgReader &r, size_t i, bool defaultValue) {
  const FValue *v = r.get(i);
  if (!v || !v->isNumber())
    return defaultValue;
  return v->intValue != 0;
}

FValue promoteBF16(Emitter &e, const FValue &v, SMLoc loc) {
  if (v.type.element.getKind() == ScalarKind::BF16)
    return e.castTo(v, DType(ScalarKind::F32), loc);
  return v;
}

/// The default accumulation dtype of tl.sum and tl.cumsum (upstream's
/// _pick_sum_dtype): integers narrower than 32 bits widen to (u)int32, with
/// bool counting as unsigned; everything else keeps its type.
DType sumType(DType in) {
  if (in.isInteger() && in.getBitWidth() < 32)
    return DType(in.isUnsigned() || in.isBool() ? ScalarKind::U32
                                                : ScalarKind::I32);
  return in;
}

/// A dtype argument (`dtype=tl.float32`), if given.
bool readDType(const ArgReader &r, size_t i, std::optional<DType> &dtype) {
  const FValue *d = r.get(i);
  if (!d)
    return true;
  if (d->kind != FValue::Kind::DType || d->type.isPointer) {
    r.bad(i, "a dtype such as tl.float32");
    return false;
  }
  dtype = d->type.element;
  return true;
}

std::optional<FValue> single(std::optional<std::vector<FValue>> results) {
  if (!results)
    return std::nullopt;
  return results->front();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

std::optional<FValue> sum(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "axis", "keep_dims", "dtype"};
  ArgReader r(e, args, "tl.sum", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), "tl.sum");
  std::optional<int64_t> axis;
  std::optional<DType> dtype;
  if (!inputs ||
      !readOptionalAxis(e, r, 1, (*inputs)[0].type.shape.size(), axis,
                        "tl.sum") ||
      !readDType(r, 3, dtype))
    return std::nullopt;
  FValue input = (*inputs)[0];
  input =
      e.castTo(input, dtype ? *dtype : sumType(input.type.element), args.loc);
  return single(emitReduce(e, {input}, axis, readFlag(r, 2, false),
                           operatorCombine("+", args.loc), args.loc, "tl.sum"));
}

/// tl.xor_sum and tl.reduce_or: a bitwise reduction of integers. xor_sum's
/// axis defaults to all of them; reduce_or needs one written, as upstream
/// (None: all of them).
std::optional<FValue> bitwiseReduce(Emitter &e, const CallArgs &args,
                                    StringRef name, StringRef op) {
  static const StringRef kParams[] = {"input", "axis", "keep_dims"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  bool axisWritten =
      args.args.size() > 1 || llvm::any_of(args.keywords, [](const auto &k) {
        return k.first == "axis";
      });
  if (op == "|" && !axisWritten)
    return r.missing(1);
  auto inputs = readInputs(e, *r.get(0), r.loc(0), name);
  std::optional<int64_t> axis;
  if (!inputs ||
      !readOptionalAxis(e, r, 1, (*inputs)[0].type.shape.size(), axis, name))
    return std::nullopt;
  if (!(*inputs)[0].type.element.isInteger())
    return r.bad(0, "a block of integers");
  return single(emitReduce(e, *inputs, axis, readFlag(r, 2, false),
                           operatorCombine(op, args.loc), args.loc, name));
}

std::optional<FValue> xorSum(Emitter &e, const CallArgs &args) {
  return bitwiseReduce(e, args, "tl.xor_sum", "^");
}

std::optional<FValue> reduceOr(Emitter &e, const CallArgs &args) {
  return bitwiseReduce(e, args, "tl.reduce_or", "|");
}

/// x.item(): the one element of a single-element block, as a
/// scalar (a reduction with nothing to combine).
std::optional<FValue> item(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input"};
  ArgReader r(e, args, "item", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  const FValue &x = *r.get(0);
  if (!x.isRuntime() || !x.type.isBlock())
    return x; // a scalar already
  if (numElements(x.type.shape) != 1 || x.type.isPointer)
    return r.bad(0, "a block of one number");
  return single(emitReduce(e, {x}, std::nullopt, false,
                           minMaxCombine(true, args.loc), args.loc, "item"));
}

/// (values, indices) of the maximum (minimum) along `axis`.
std::optional<std::vector<FValue>>
reduceWithIndices(Emitter &e, const FValue &input, std::optional<int64_t> axis,
                  bool keepDims, bool isMax, bool tieBreakLeft, SMLoc loc,
                  StringRef builtin) {
  int64_t rank = input.type.shape.size();
  if (!axis) {
    if (rank != 1)
      return e.error(loc, builtin +
                              " with indices needs an axis for a block "
                              "of shape " +
                              formatShape(input.type.shape));
    axis = 0;
  }
  int64_t n = input.type.shape[*axis];
  auto &b = e.getBuilder();
  TritonType indexType{DType(ScalarKind::I32), false, {n}};
  FValue index = FValue::runtime(
      kiln::MakeRangeOp::create(
          b, e.location(loc), indexType.toMLIR(e.getContext()),
          b.getI32IntegerAttr(0), b.getI32IntegerAttr(int32_t(n))),
      indexType);
  // The index varies along `axis` only.
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      index = expandDims(e, index, d, loc);
  std::optional<FValue> full = e.broadcastTo(index, input.type.shape, loc);
  if (!full)
    return std::nullopt;
  return emitReduce(e, {input, *full}, axis, keepDims,
                    argMinMaxCombine(isMax, tieBreakLeft, loc), loc, builtin);
}

std::optional<FValue> maxMinImpl(Emitter &e, const CallArgs &args, bool isMax) {
  StringRef name = isMax ? "tl.max" : "tl.min";
  static const StringRef kParams[] = {"input", "axis", "return_indices",
                                      "return_indices_tie_break_left",
                                      "keep_dims"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  // tl.max(a, b) on two run-time scalars reads as "the larger of a and b",
  // but b is the axis: upstream Triton rejects the call too (its reduction
  // needs a block and a compile-time axis), so say what was meant.
  const FValue *in = r.get(0), *second = r.get(1);
  if (in->isRuntime() && !in->type.isBlock() && second && second->isRuntime())
    return e.error(args.loc,
                   name +
                       " reduces a block along a compile-time axis, but "
                       "its input is " +
                       in->describe() + " and its axis (the second argument) " +
                       second->describe() + "; for the " +
                       (isMax ? "larger" : "smaller") + " of two values use " +
                       (isMax ? "tl.maximum" : "tl.minimum") + "(a, b)");
  auto inputs = readInputs(e, *r.get(0), r.loc(0), name);
  std::optional<int64_t> axis;
  if (!inputs ||
      !readOptionalAxis(e, r, 1, (*inputs)[0].type.shape.size(), axis, name))
    return std::nullopt;
  FValue input = promoteBF16(e, (*inputs)[0], args.loc);
  bool keepDims = readFlag(r, 4, false);
  if (readFlag(r, 2, false)) {
    auto results = reduceWithIndices(e, input, axis, keepDims, isMax,
                                     readFlag(r, 3, true), args.loc, name);
    if (!results)
      return std::nullopt;
    return FValue::tuple(*results);
  }
  DType t = input.type.element;
  if (t.getBitWidth() < 32)
    input =
        e.castTo(input, DType(t.isFloat() ? ScalarKind::F32 : ScalarKind::I32),
                 args.loc);
  return single(emitReduce(e, {input}, axis, keepDims,
                           minMaxCombine(isMax, args.loc), args.loc, name));
}
std::optional<FValue> max(Emitter &e, const CallArgs &args) {
  return maxMinImpl(e, args, true);
}
std::optional<FValue> min(Emitter &e, const CallArgs &args) {
  return maxMinImpl(e, args, false);
}

std::optional<FValue> argMaxMinImpl(Emitter &e, const CallArgs &args,
                                    bool isMax) {
  StringRef name = isMax ? "tl.argmax" : "tl.argmin";
  static const StringRef kParams[] = {"input", "axis", "tie_break_left",
                                      "keep_dims"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), name);
  if (!inputs)
    return std::nullopt;
  if (!r.get(1))
    return r.missing(1);
  std::optional<int64_t> axis;
  if (!readOptionalAxis(e, r, 1, (*inputs)[0].type.shape.size(), axis, name))
    return std::nullopt;
  FValue input = promoteBF16(e, (*inputs)[0], args.loc);
  auto results = reduceWithIndices(e, input, axis, readFlag(r, 3, false), isMax,
                                   readFlag(r, 2, true), args.loc, name);
  if (!results)
    return std::nullopt;
  return (*results)[1];
}
std::optional<FValue> argmax(Emitter &e, const CallArgs &args) {
  return argMaxMinImpl(e, args, true);
}
std::optional<FValue> argmin(Emitter &e, const CallArgs &args) {
  return argMaxMinImpl(e, args, false);
}

std::optional<FValue> reduce(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "axis", "combine_fn",
                                      "keep_dims"};
  ArgReader r(e, args, "tl.reduce", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), "tl.reduce");
  std::optional<int64_t> axis;
  if (!inputs || !readOptionalAxis(e, r, 1, (*inputs)[0].type.shape.size(),
                                   axis, "tl.reduce"))
    return std::nullopt;
  const FValue *fn = r.get(2);
  if (!fn)
    return r.missing(2);
  if (fn->kind != FValue::Kind::Function)
    return r.bad(2, "a @triton.jit function");
  auto results = emitReduce(e, *inputs, axis, readFlag(r, 3, false),
                            jitCombine(*fn, args.loc), args.loc, "tl.reduce");
  if (!results)
    return std::nullopt;
  if (r.get(0)->kind == FValue::Kind::Tuple)
    return FValue::tuple(*results);
  return results->front();
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

std::optional<std::vector<FValue>>
emitScan(Emitter &e, std::vector<FValue> inputs, int64_t axis, bool reverse,
         const CombineFn &combine, SMLoc loc, StringRef builtin) {
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<mlir::Value> values;
  for (const FValue &in : inputs) {
    types.push_back(in.value.getType());
    values.push_back(in.value);
  }
  auto &b = e.getBuilder();
  auto op = kiln::ScanOp::create(b, e.location(loc), types, values,
                                 b.getI32IntegerAttr(int32_t(axis)),
                                 b.getBoolAttr(reverse));
  if (!buildCombineRegion<kiln::ScanReturnOp>(e, op.getCombineOp(), inputs,
                                              combine, loc, builtin)) {
    op->erase();
    return std::nullopt;
  }
  std::vector<FValue> results;
  for (size_t i = 0; i < inputs.size(); ++i)
    results.push_back(FValue::runtime(op.getResult(i), inputs[i].type));
  return results;
}

std::optional<FValue> scanImpl(Emitter &e, const CallArgs &args, StringRef name,
                               bool isSum) {
  static const StringRef kParams[] = {"input", "axis", "reverse", "dtype"};
  ArgReader r(e, args, name,
              llvm::ArrayRef<StringRef>(kParams).take_front(isSum ? 4 : 3));
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), name);
  if (!inputs)
    return std::nullopt;
  int64_t axis = 0;
  if (const FValue *a = r.get(1)) {
    auto ax = readAxis(e, *a, (*inputs)[0].type.shape.size(), r.loc(1),
                       "the axis of " + name.str());
    if (!ax)
      return std::nullopt;
    axis = *ax;
  }
  FValue input = promoteBF16(e, (*inputs)[0], args.loc);
  if (isSum) {
    std::optional<DType> dtype;
    if (!readDType(r, 3, dtype))
      return std::nullopt;
    input =
        e.castTo(input, dtype ? *dtype : sumType(input.type.element), args.loc);
  }
  return single(emitScan(e, {input}, axis, readFlag(r, 2, false),
                         operatorCombine(isSum ? "+" : "*", args.loc), args.loc,
                         name));
}
std::optional<FValue> cumsum(Emitter &e, const CallArgs &args) {
  return scanImpl(e, args, "tl.cumsum", true);
}
std::optional<FValue> cumprod(Emitter &e, const CallArgs &args) {
  return scanImpl(e, args, "tl.cumprod", false);
}

std::optional<FValue> associativeScan(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "axis", "combine_fn", "reverse"};
  ArgReader r(e, args, "tl.associative_scan", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), "tl.associative_scan");
  if (!inputs)
    return std::nullopt;
  if (!r.get(1))
    return r.missing(1);
  auto axis = readAxis(e, *r.get(1), (*inputs)[0].type.shape.size(), r.loc(1),
                       "the axis of tl.associative_scan");
  if (!axis)
    return std::nullopt;
  const FValue *fn = r.get(2);
  if (!fn)
    return r.missing(2);
  if (fn->kind != FValue::Kind::Function)
    return r.bad(2, "a @triton.jit function");
  auto results =
      emitScan(e, *inputs, *axis, readFlag(r, 3, false),
               jitCombine(*fn, args.loc), args.loc, "tl.associative_scan");
  if (!results)
    return std::nullopt;
  if (r.get(0)->kind == FValue::Kind::Tuple)
    return FValue::tuple(*results);
  return results->front();
}

//===----------------------------------------------------------------------===//
// Sort: a bitonic network over the block viewed as a hypercube of 2s.
//===----------------------------------------------------------------------===//

int64_t log2Exact(int64_t n) {
  int64_t l = 0;
  while ((int64_t(1) << l) < n)
    ++l;
  return l;
}

/// [1, ..., 2, ..., 1] with the 2 at hypercube dimension `nDims - 1 - j`:
/// 0/1 by the position along the j-th innermost axis.
FValue indicator(Emitter &e, int64_t nDims, int64_t j, SMLoc loc) {
  auto &b = e.getBuilder();
  TritonType t{DType(ScalarKind::I32), false, {2}};
  FValue range = FValue::runtime(
      kiln::MakeRangeOp::create(b, e.location(loc), t.toMLIR(e.getContext()),
                                b.getI32IntegerAttr(0), b.getI32IntegerAttr(2)),
      t);
  llvm::SmallVector<int64_t> shape(nDims, 1);
  shape[nDims - 1 - j] = 2;
  return reshapeTo(e, range, shape, false, loc);
}

/// One compare-and-swap stage on the i-th innermost hypercube axis.
std::optional<FValue> compareAndSwap(Emitter &e, const FValue &x,
                                     const FValue &flip, int64_t i, SMLoc loc) {
  int64_t nDims = x.type.shape.size();
  unsigned bits = x.type.element.getBitWidth();
  DType intType = DType::signedInteger(bits);
  std::optional<FValue> ix =
      e.bitcastTo(x, TritonType{intType, false, {}}, loc);
  if (!ix)
    return std::nullopt;
  // The partner of each element: xor with the xor of the pair.
  int64_t axis = nDims - 1 - i;
  auto pairXor = emitReduce(e, {*ix}, axis, /*keepDims=*/true,
                            operatorCombine("^", loc), loc, "tl.sort");
  if (!pairXor)
    return std::nullopt;
  std::optional<FValue> iy = e.binary("^", *ix, pairXor->front(), loc);
  std::optional<FValue> y =
      iy ? e.bitcastTo(*iy, x.type.scalar(), loc) : std::nullopt;
  if (!y)
    return std::nullopt;
  FValue isRight = indicator(e, nDims, i, loc);
  std::optional<FValue> gt = e.binary(">", x, *y, loc);
  std::optional<FValue> dir =
      gt ? e.binary("^", flip, isRight, loc) : std::nullopt;
  std::optional<FValue> swap =
      dir ? e.binary("!=", *gt, *dir, loc) : std::nullopt;
  if (!swap)
    return std::nullopt;
  auto shape = swap->type.shape;
  std::optional<FValue> s = e.broadcastTo(*swap, shape, loc);
  std::optional<FValue> yy = s ? e.broadcastTo(*y, shape, loc) : std::nullopt;
  std::optional<FValue> xx = yy ? e.broadcastTo(x, shape, loc) : std::nullopt;
  if (!xx)
    return std::nullopt;
  mlir::Value v = mlir::arith::SelectOp::create(e.getBuilder(), e.location(loc),
                                                s->value, yy->value, xx->value);
  return FValue::runtime(v, xx->type);
}

/// `stage` rounds of compare-and-swap; `order` 0 ascending, 1 descending,
/// 2 alternating by the stage's indicator.
std::optional<FValue> bitonicMerge(Emitter &e, FValue x, int64_t stage,
                                   int64_t order, SMLoc loc) {
  int64_t nDims = x.type.shape.size();
  FValue flip =
      order == 2
          ? indicator(e, nDims, stage, loc)
          : e.constant(FValue::integer(order),
                       TritonType{DType(ScalarKind::I32), false, {}}, loc);
  for (int64_t i = 0; i < stage; ++i) {
    std::optional<FValue> next = compareAndSwap(e, x, flip, stage - 1 - i, loc);
    if (!next)
      return std::nullopt;
    x = *next;
  }
  return x;
}

/// tl.sort and tl.topk: upstream's bitonic network. With `k` (a power of
/// 2), the first log2(k) merges sort runs of k, then each further round
/// keeps the larger (smaller) of two runs' elements pairwise and merges
/// them again (bitonic top-k): the result is the last dimension's k
/// largest, in order.
std::optional<FValue> sortOrTopK(Emitter &e, const CallArgs &args,
                                 StringRef name, bool topK) {
  static const StringRef kSortParams[] = {"x", "dim", "descending"};
  static const StringRef kTopKParams[] = {"x", "k", "dim"};
  ArgReader r(e, args, name,
              topK ? llvm::ArrayRef<StringRef>(kTopKParams)
                   : llvm::ArrayRef<StringRef>(kSortParams));
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), name);
  if (!inputs)
    return std::nullopt;
  // Booleans sort as bytes (false before true), as upstream's i1 compares.
  bool isBool = (*inputs)[0].type.element.isBool();
  const FValue x = isBool
                       ? e.castTo((*inputs)[0], DType(ScalarKind::U8), r.loc(0))
                       : (*inputs)[0];
  int64_t rank = x.type.shape.size();
  unsigned dimArg = topK ? 2 : 1;
  if (const FValue *dim = r.get(dimArg)) {
    auto d =
        readAxis(e, *dim, rank, r.loc(dimArg), ("the dim of " + name).str());
    if (!d)
      return std::nullopt;
    if (*d != rank - 1)
      return e.error(r.loc(dimArg), name +
                                        " only works along the last "
                                        "dimension (" +
                                        std::to_string(rank - 1) + "), got " +
                                        std::to_string(*d));
  }
  int64_t descending = 1;
  if (!topK) {
    const FValue *desc = r.get(2);
    if (desc && !desc->isNumber())
      return r.bad(2, "a compile-time bool");
    descending = desc ? desc->intValue != 0 : 0;
  }
  if (x.type.element.getBitWidth() < 8)
    return r.bad(0, "a block of 8- to 64-bit elements");
  int64_t n = x.type.shape.back();
  int64_t logN = log2Exact(n);
  if ((int64_t(1) << logN) != n)
    return r.bad(0, "a block whose last dimension is a power of 2");
  int64_t logK = logN;
  if (topK) {
    const FValue *k = r.get(1);
    if (!k)
      return r.missing(1);
    if (!k->isNumber() || k->intValue < 1 || k->intValue > n ||
        (k->intValue & (k->intValue - 1)) != 0)
      return r.bad(1, "a compile-time power of 2 no larger than the last "
                      "dimension (" +
                          std::to_string(n) + ")");
    logK = log2Exact(k->intValue);
  }
  int64_t nDims = log2Exact(numElements(x.type.shape));
  FValue h =
      reshapeTo(e, x, llvm::SmallVector<int64_t>(nDims, 2), false, args.loc);
  for (int64_t i = 1; i <= logK; ++i) {
    std::optional<FValue> next =
        bitonicMerge(e, h, i, i < logN ? 2 : descending, args.loc);
    if (!next)
      return std::nullopt;
    h = *next;
  }
  for (int64_t i = logK + 1; i <= logN; ++i) {
    int64_t axis = int64_t(h.type.shape.size()) - 1 - logK;
    auto kept =
        emitReduce(e, {h}, axis, /*keepDims=*/false,
                   minMaxCombine(descending != 0, args.loc), args.loc, name);
    if (!kept)
      return std::nullopt;
    std::optional<FValue> next = bitonicMerge(
        e, kept->front(), logK, i < logN ? 2 : descending, args.loc);
    if (!next)
      return std::nullopt;
    h = *next;
  }
  llvm::SmallVector<int64_t> shape(x.type.shape.begin(),
                                   x.type.shape.end() - 1);
  shape.push_back(int64_t(1) << logK);
  FValue sorted = reshapeTo(e, h, shape, false, args.loc);
  return isBool ? e.castTo(sorted, DType(ScalarKind::I1), args.loc) : sorted;
}

/// tl.bitonic_merge: the last merge of the bitonic network alone, along the
/// last dimension: a bitonic sequence comes out sorted (ascending unless
/// `descending`).
std::optional<FValue> bitonicMergeBuiltin(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "dim", "descending"};
  ArgReader r(e, args, "tl.bitonic_merge", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), "tl.bitonic_merge");
  if (!inputs)
    return std::nullopt;
  const FValue &x = (*inputs)[0];
  int64_t rank = x.type.shape.size();
  if (const FValue *dim = r.get(1); dim && !dim->isNone()) {
    auto d = readAxis(e, *dim, rank, r.loc(1), "the dim of tl.bitonic_merge");
    if (!d)
      return std::nullopt;
    if (*d != rank - 1)
      return e.error(r.loc(1), "tl.bitonic_merge only works along the last "
                               "dimension (" +
                                   std::to_string(rank - 1) + "), got " +
                                   std::to_string(*d));
  }
  const FValue *desc = r.get(2);
  if (desc && !desc->isNumber())
    return r.bad(2, "a compile-time bool");
  if (x.type.element.getBitWidth() < 8)
    return r.bad(0, "a block of 8- to 64-bit elements");
  int64_t n = x.type.shape.back(), total = numElements(x.type.shape);
  int64_t logN = log2Exact(n);
  if ((int64_t(1) << logN) != n || (int64_t(1) << log2Exact(total)) != total)
    return r.bad(0, "a block whose dimensions are powers of 2");
  if (logN == 0)
    return x;
  FValue h = reshapeTo(e, x, llvm::SmallVector<int64_t>(log2Exact(total), 2),
                       false, args.loc);
  std::optional<FValue> merged =
      bitonicMerge(e, h, logN, desc ? desc->intValue != 0 : 0, args.loc);
  if (!merged)
    return std::nullopt;
  return reshapeTo(e, *merged, x.type.shape, false, args.loc);
}

std::optional<FValue> sort(Emitter &e, const CallArgs &args) {
  return sortOrTopK(e, args, "tl.sort", /*topK=*/false);
}

std::optional<FValue> topk(Emitter &e, const CallArgs &args) {
  return sortOrTopK(e, args, "tl.topk", /*topK=*/true);
}

/// tl.flip: reverses `dim` (a power of 2) by swapping halves at every level
/// of a [2, 2, ...] view of that dimension, with xor reductions (as upstream).
std::optional<FValue> flip(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "dim"};
  ArgReader r(e, args, "tl.flip", kParams);
  if (!r.isOk() || !r.get(0))
    return r.isOk() ? r.missing(0) : std::nullopt;
  auto inputs = readInputs(e, *r.get(0), r.loc(0), "tl.flip");
  if (!inputs)
    return std::nullopt;
  const FValue &x = (*inputs)[0];
  int64_t rank = x.type.shape.size();
  int64_t dim = rank - 1;
  if (const FValue *d = r.get(1)) {
    auto a = readAxis(e, *d, rank, r.loc(1), "the dim of tl.flip");
    if (!a)
      return std::nullopt;
    dim = *a;
  }
  unsigned bits = x.type.element.getBitWidth();
  if (bits < 8)
    return r.bad(0, "a block of 8- to 64-bit elements");
  int64_t steps = log2Exact(x.type.shape[dim]);
  if (steps == 0)
    return x;
  DType intType = DType::signedInteger(bits);
  std::optional<FValue> ix =
      e.bitcastTo(x, TritonType{intType, false, {}}, args.loc);
  if (!ix)
    return std::nullopt;
  llvm::SmallVector<int64_t> cube(x.type.shape.begin(),
                                  x.type.shape.begin() + dim);
  cube.append(steps, 2);
  cube.append(x.type.shape.begin() + dim + 1, x.type.shape.end());
  FValue y = reshapeTo(e, *ix, cube, false, args.loc);
  for (int64_t i = 0; i < steps; ++i) {
    auto pair = emitReduce(e, {y}, dim + i, /*keepDims=*/true,
                           operatorCombine("^", args.loc), args.loc, "tl.flip");
    std::optional<FValue> swapped =
        pair ? e.binary("^", y, pair->front(), args.loc) : std::nullopt;
    if (!swapped)
      return std::nullopt;
    y = *swapped;
  }
  return e.bitcastTo(reshapeTo(e, y, x.type.shape, false, args.loc),
                     x.type.scalar(), args.loc);
}

} // namespace

std::optional<std::vector<FValue>> kiln::frontend::emitReduce(
    Emitter &e, std::vector<FValue> inputs, std::optional<int64_t> axis,
    bool keepDims, const CombineFn &combine, SMLoc loc, StringRef builtin) {
  int64_t rank = inputs[0].type.shape.size();
  if (!axis) {
    for (FValue &in : inputs)
      in = reshapeTo(e, in, {numElements(in.type.shape)}, true, loc);
    axis = 0;
  }
  llvm::SmallVector<int64_t> shape(inputs[0].type.shape);
  shape.erase(shape.begin() + *axis);
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<mlir::Value> values;
  for (const FValue &in : inputs) {
    types.push_back(in.type.withShape(shape).toMLIR(e.getContext()));
    values.push_back(in.value);
  }
  auto &b = e.getBuilder();
  auto op = kiln::ReduceOp::create(b, e.location(loc), types, values,
                                   b.getI32IntegerAttr(int32_t(*axis)));
  if (!buildCombineRegion<kiln::ReduceReturnOp>(e, op.getCombineOp(), inputs,
                                                combine, loc, builtin)) {
    op->erase();
    return std::nullopt;
  }
  std::vector<FValue> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    FValue result =
        FValue::runtime(op.getResult(i), inputs[i].type.withShape(shape));
    if (keepDims) {
      if (inputs[0].type.shape.size() == size_t(rank))
        result = expandDims(e, result, *axis, loc);
      else // all dimensions were reduced: [1, ..., 1]
        result =
            *e.broadcastTo(result, llvm::SmallVector<int64_t>(rank, 1), loc);
    }
    results.push_back(result);
  }
  return results;
}

void kiln::frontend::addReduceBuiltins(BuiltinTable &table) {
  static const std::pair<const char *, BuiltinFn> kEntries[] = {
      {"tl.sum", sum},
      {"tl.max", max},
      {"tl.min", min},
      {"tl.argmax", argmax},
      {"tl.argmin", argmin},
      {"tl.xor_sum", xorSum},
      {"tl.reduce", reduce},
      {"tl.cumsum", cumsum},
      {"tl.cumprod", cumprod},
      {"tl.associative_scan", associativeScan},
      {"tl.sort", sort},
      {"tl.flip", flip},
      {"tl.topk", topk},
      {"tl.reduce_or", reduceOr},
      {"tl.bitonic_merge", bitonicMergeBuiltin},
  };
  for (const auto &[name, fn] : kEntries) {
    table[name] = fn;
    table["method." + StringRef(name).drop_front(3).str()] = fn;
  }
  table["method.item"] = item;
}
