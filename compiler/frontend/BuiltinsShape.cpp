//===- BuiltinsShape.cpp - builtins that reshape blocks -------------------===//
//
// Subscripts with None and `:` (x[:, None]), tl.broadcast(_to),
// tl.expand_dims, tl.reshape/view/ravel, tl.trans/permute and `.T`,
// tl.join/split/interleave/cat. Shapes are checked here, so the kiln shape
// ops are always built valid.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace kiln::frontend;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

int64_t kiln::frontend::numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string kiln::frontend::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + "]";
}

std::optional<int64_t> kiln::frontend::readAxis(Emitter &e, const FValue &v,
                                                int64_t rank, SMLoc loc,
                                                StringRef what) {
  std::optional<FValue> folded = foldedInteger(v);
  const FValue &known = folded ? *folded : v;
  if (!known.isInt()) {
    e.error(loc, what + " must be a compile-time int, got " + v.describe());
    return std::nullopt;
  }
  int64_t axis = known.intValue;
  if (axis < -rank || axis >= rank) {
    e.error(loc, what + " is " + std::to_string(axis) +
                     ", out of range for a block of rank " +
                     std::to_string(rank) +
                     " (valid: " + std::to_string(-rank) + " to " +
                     std::to_string(rank - 1) + ")");
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<FValue>
kiln::frontend::flattenVarargs(llvm::ArrayRef<FValue> args) {
  if (args.size() == 1 && args[0].kind == FValue::Kind::Tuple)
    return args[0].elements;
  return args.vec();
}

FValue kiln::frontend::expandDims(Emitter &e, const FValue &v, int64_t axis,
                                  SMLoc loc) {
  llvm::SmallVector<int64_t> shape(v.type.shape);
  shape.insert(shape.begin() + axis, 1);
  if (!v.type.isBlock())
    return *e.broadcastTo(v, shape, loc); // a splat; cannot fail
  TritonType type = v.type.withShape(shape);
  mlir::Value r = kiln::ExpandDimsOp::create(e.getBuilder(), e.location(loc),
                                             type.toMLIR(e.getContext()),
                                             v.value, int32_t(axis));
  return FValue::runtime(r, type);
}

FValue kiln::frontend::reshapeTo(Emitter &e, const FValue &v,
                                 llvm::ArrayRef<int64_t> shape,
                                 bool allowReorder, SMLoc loc) {
  if (llvm::ArrayRef<int64_t>(v.type.shape) == shape)
    return v;
  if (!v.type.isBlock())
    return *e.broadcastTo(v, shape, loc); // one element: a splat
  TritonType type = v.type.withShape(shape);
  auto &b = e.getBuilder();
  mlir::Value r =
      kiln::ReshapeOp::create(b, e.location(loc), type.toMLIR(e.getContext()),
                              v.value, b.getBoolAttr(allowReorder));
  return FValue::runtime(r, type);
}

FValue kiln::frontend::permuteDims(Emitter &e, const FValue &v,
                                   llvm::ArrayRef<int32_t> order, SMLoc loc) {
  bool identity = true;
  llvm::SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(order)) {
    shape.push_back(v.type.shape[d]);
    identity &= int64_t(i) == d;
  }
  if (identity)
    return v;
  TritonType type = v.type.withShape(shape);
  auto &b = e.getBuilder();
  // A splat (tl.full's) is the same splat in the new shape.
  mlir::DenseElementsAttr splat;
  if (mlir::matchPattern(v.value, mlir::m_Constant(&splat)) &&
      splat.isSplat()) {
    auto shaped = mlir::cast<mlir::ShapedType>(type.toMLIR(e.getContext()));
    return FValue::runtime(
        mlir::arith::ConstantOp::create(b, e.location(loc), shaped,
                                        splat.resizeSplat(shaped)),
        type);
  }
  mlir::Value r =
      kiln::TransOp::create(b, e.location(loc), type.toMLIR(e.getContext()),
                            v.value, b.getDenseI32ArrayAttr(order));
  return FValue::runtime(r, type);
}

namespace {

/// A run-time block argument (blocks of pointers included), or an error
/// naming the builtin.
std::optional<FValue> requireBlock(Emitter &e, const ArgReader &r, size_t i,
                                   bool allowScalar = false) {
  const FValue *v = r.get(i);
  if (!v)
    return r.missing(i);
  if (!v->isRuntime() || v->type.isBlockPointer() ||
      (!allowScalar && !v->type.isBlock()))
    return r.bad(i, allowScalar ? "a tensor" : "a block (tensor)");
  return *v;
}

/// Reads a shape given as a tuple or as the remaining positional arguments
/// of a varargs builtin (`tl.reshape(x, 2, 8)`).
std::optional<llvm::SmallVector<int64_t>> readVarargShape(Emitter &e,
                                                          const CallArgs &args,
                                                          size_t first,
                                                          StringRef what) {
  if (args.args.size() <= first)
    return e.error(args.loc, what + " needs a shape");
  std::vector<FValue> dims =
      flattenVarargs(llvm::ArrayRef<FValue>(args.args).drop_front(first));
  return readShape(e, FValue::tuple(dims), args.argLocs[first], what);
}

/// The keyword arguments of a varargs builtin: only `names` are allowed.
bool checkKeywords(Emitter &e, const CallArgs &args, StringRef builtin,
                   llvm::ArrayRef<StringRef> names) {
  for (size_t k = 0; k < args.keywords.size(); ++k)
    if (!llvm::is_contained(names, args.keywords[k].first)) {
      e.error(args.keywordLocs[k],
              builtin + " has no argument '" + args.keywords[k].first + "'");
      return false;
    }
  return true;
}

const FValue *keyword(const CallArgs &args, StringRef name) {
  for (auto &[k, v] : args.keywords)
    if (k == name)
      return &v;
  return nullptr;
}

/// The first positional argument of a varargs builtin, or its keyword.
const FValue *firstArg(const CallArgs &args, StringRef name) {
  if (!args.args.empty())
    return &args.args[0];
  return keyword(args, name);
}

//===----------------------------------------------------------------------===//
// Subscripts: x[:, None]
//===----------------------------------------------------------------------===//

std::optional<FValue> subscript(Emitter &e, const CallArgs &args) {
  FValue result = args.args[0];
  if (result.type.isBlockPointer())
    return e.error(args.loc, "a block pointer cannot be indexed");
  int64_t rank = result.type.shape.size(), consumed = 0;
  for (size_t i = 1; i < args.args.size(); ++i) {
    const FValue &index = args.args[i];
    int64_t dim = i - 1; // the index's position is the result dimension
    if (index.isNone()) {
      // Of a scalar, the ':' indices stand for no dimension: `pid[:, None]`
      // is a block of shape [1], as upstream's expand_dims splats a scalar.
      if (rank == 0)
        dim = std::min<int64_t>(dim, result.type.shape.size());
      result = expandDims(e, result, dim, args.argLocs[i]);
      continue;
    }
    bool fullSlice = index.kind == FValue::Kind::Marker &&
                     index.text == "slice" &&
                     llvm::all_of(index.elements,
                                  [](const FValue &p) { return p.isNone(); });
    if (!fullSlice && rank == 0 && index.isInt())
      return e.error(args.argLocs[i],
                     "a run-time scalar of type " + result.type.str() +
                         " cannot be indexed with an int; a kernel parameter "
                         "that upstream takes as a tuple (x.stride()) needs a "
                         "tuple type in the signature, e.g. "
                         "stride=(i32, i32)");
    if (!fullSlice)
      return e.error(args.argLocs[i],
                     "a block can only be indexed with None (a new "
                     "dimension) and ':' (a whole dimension), as in "
                     "x[:, None]; got " +
                         (index.kind == FValue::Kind::Marker
                              ? std::string("a slice with bounds")
                              : index.describe()));
    if (++consumed > rank && rank > 0)
      return e.error(args.argLocs[i],
                     "too many ':' indices for a block of shape " +
                         formatShape(args.args[0].type.shape));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

std::optional<FValue> broadcast(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "other"};
  ArgReader r(e, args, "tl.broadcast", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> a = requireBlock(e, r, 0, true);
  std::optional<FValue> b = a ? requireBlock(e, r, 1, true) : std::nullopt;
  if (!b)
    return std::nullopt;
  auto shape = e.broadcastShapes(a->type.shape, b->type.shape, args.loc);
  if (!shape)
    return std::nullopt;
  a = e.broadcastTo(*a, *shape, r.loc(0));
  b = a ? e.broadcastTo(*b, *shape, r.loc(1)) : std::nullopt;
  if (!b)
    return std::nullopt;
  return FValue::tuple({*a, *b});
}

std::optional<FValue> broadcastToShape(Emitter &e, const CallArgs &args) {
  if (!checkKeywords(e, args, "tl.broadcast_to", {"input"}))
    return std::nullopt;
  const FValue *input = firstArg(args, "input");
  if (!input || !input->isRuntime() || input->type.isBlockPointer())
    return e.error(args.loc, "tl.broadcast_to needs a tensor as its input, "
                             "got " +
                                 (input ? input->describe() : "nothing"));
  size_t first = args.args.empty() ? 0 : 1;
  auto shape = readVarargShape(e, args, first, "the shape of tl.broadcast_to");
  if (!shape)
    return std::nullopt;
  return e.broadcastTo(*input, *shape, args.loc);
}

std::optional<FValue> expandDimsBuiltin(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "axis"};
  ArgReader r(e, args, "tl.expand_dims", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> input = requireBlock(e, r, 0, true);
  if (!input)
    return std::nullopt;
  if (!r.get(1))
    return r.missing(1);
  std::vector<FValue> axes = flattenVarargs(*r.get(1));
  int64_t newRank = input->type.shape.size() + axes.size();
  llvm::SmallVector<int64_t> normalized;
  for (const FValue &a : axes) {
    auto axis = readAxis(e, a, newRank, r.loc(1), "the axis of tl.expand_dims");
    if (!axis)
      return std::nullopt;
    if (llvm::is_contained(normalized, *axis))
      return e.error(r.loc(1), "tl.expand_dims got the axis " +
                                   std::to_string(*axis) + " twice");
    normalized.push_back(*axis);
  }
  llvm::sort(normalized);
  FValue result = *input;
  for (int64_t axis : normalized)
    result = expandDims(e, result, axis, args.loc);
  return result;
}

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

std::optional<FValue> reshapeImpl(Emitter &e, const CallArgs &args,
                                  StringRef name, bool defaultReorder) {
  if (!checkKeywords(e, args, name, {"input", "can_reorder", "shape"}))
    return std::nullopt;
  const FValue *input = firstArg(args, "input");
  if (!input || !input->isRuntime() || input->type.isBlockPointer())
    return e.error(args.loc, name + " needs a tensor as its input, got " +
                                 (input ? input->describe() : "nothing"));
  std::optional<llvm::SmallVector<int64_t>> shape;
  // To () a one-element block becomes its element, a scalar, as upstream's
  // reshape to an empty shape does.
  const FValue *shapeArg = keyword(args, "shape");
  if (!shapeArg && args.args.size() == 2)
    shapeArg = &args.args[1];
  if (shapeArg && shapeArg->kind == FValue::Kind::Tuple &&
      shapeArg->elements.empty()) {
    if (numElements(input->type.shape) != 1)
      return e.error(args.loc,
                     name + " to () needs one element, got " +
                         formatShape(input->type.shape) + " of " +
                         std::to_string(numElements(input->type.shape)));
    FValue flat = reshapeTo(e, *input, {1}, false, args.loc);
    return callBuiltin(e, "tl.max", {flat, FValue::integer(0)}, {}, args.loc);
  }
  if (const FValue *s = keyword(args, "shape"))
    shape = readShape(e, *s, args.loc, "the shape of " + name.str());
  else
    shape = readVarargShape(e, args, args.args.empty() ? 0 : 1,
                            "the shape of " + name.str());
  if (!shape)
    return std::nullopt;
  bool reorder = defaultReorder;
  if (const FValue *c = keyword(args, "can_reorder")) {
    if (!c->isNumber())
      return e.error(args.loc, "can_reorder of " + name +
                                   " must be a compile-time bool, got " +
                                   c->describe());
    reorder = c->intValue != 0;
  }
  if (numElements(input->type.shape) != numElements(*shape))
    return e.error(args.loc,
                   name + " cannot change the number of elements: " +
                       formatShape(input->type.shape) + " has " +
                       std::to_string(numElements(input->type.shape)) + ", " +
                       formatShape(*shape) + " has " +
                       std::to_string(numElements(*shape)));
  return reshapeTo(e, *input, *shape, reorder, args.loc);
}

std::optional<FValue> reshape(Emitter &e, const CallArgs &args) {
  return reshapeImpl(e, args, "tl.reshape", false);
}
std::optional<FValue> view(Emitter &e, const CallArgs &args) {
  return reshapeImpl(e, args, "tl.view", true);
}

std::optional<FValue> ravel(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x", "can_reorder"};
  ArgReader r(e, args, "tl.ravel", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> input = requireBlock(e, r, 0);
  if (!input)
    return std::nullopt;
  bool reorder = r.get(1) && r.get(1)->isNumber() && r.get(1)->intValue;
  int64_t n = numElements(input->type.shape);
  return reshapeTo(e, *input, {n}, reorder, args.loc);
}

//===----------------------------------------------------------------------===//
// Transposes
//===----------------------------------------------------------------------===//

std::optional<FValue> permuteImpl(Emitter &e, const CallArgs &args,
                                  StringRef name, bool defaultSwap) {
  if (!checkKeywords(e, args, name, {"input", "dims"}))
    return std::nullopt;
  const FValue *input = firstArg(args, "input");
  if (!input || !input->isRuntime() || !input->type.isBlock() ||
      input->type.isBlockPointer())
    return e.error(args.loc, name + " needs a block as its input, got " +
                                 (input ? input->describe() : "nothing"));
  std::vector<FValue> dims;
  if (const FValue *d = keyword(args, "dims"))
    dims = flattenVarargs(*d);
  else if (args.args.size() > 1)
    dims = flattenVarargs(llvm::ArrayRef<FValue>(args.args).drop_front());
  int64_t rank = input->type.shape.size();
  // tl.trans without dims swaps the last two dimensions (upstream's rule).
  if (dims.empty() && defaultSwap) {
    if (rank < 2)
      return e.error(args.loc, name + " of a block of shape " +
                                   formatShape(input->type.shape) +
                                   " has no two dimensions to swap");
    for (int64_t i = 0; i < rank - 2; ++i)
      dims.push_back(FValue::integer(i));
    dims.push_back(FValue::integer(rank - 1));
    dims.push_back(FValue::integer(rank - 2));
  }
  if (int64_t(dims.size()) != rank)
    return e.error(args.loc, name + " of a block of shape " +
                                 formatShape(input->type.shape) + " needs " +
                                 std::to_string(rank) + " dimensions, got " +
                                 std::to_string(dims.size()));
  llvm::SmallVector<int32_t> order;
  for (const FValue &d : dims) {
    if (!d.isInt() || d.intValue < 0 || d.intValue >= rank ||
        llvm::is_contained(order, d.intValue))
      return e.error(args.loc, "the dimensions of " + name +
                                   " must be a permutation of 0.." +
                                   std::to_string(rank - 1));
    order.push_back(int32_t(d.intValue));
  }
  return permuteDims(e, *input, order, args.loc);
}

std::optional<FValue> trans(Emitter &e, const CallArgs &args) {
  return permuteImpl(e, args, "tl.trans", true);
}
std::optional<FValue> permute(Emitter &e, const CallArgs &args) {
  return permuteImpl(e, args, "tl.permute", false);
}

/// `x.T`: the transpose of a 2-D block.
std::optional<FValue> propertyT(Emitter &e, const CallArgs &args) {
  const FValue &x = args.args[0];
  if (!x.isRuntime() || x.type.shape.size() != 2 || x.type.isBlockPointer())
    return e.error(args.loc, "'.T' needs a 2-D block, got " + x.describe());
  return permuteDims(e, x, {1, 0}, args.loc);
}

/// `x.numel`: the element count, a compile-time int.
std::optional<FValue> propertyNumel(Emitter &e, const CallArgs &args) {
  (void)e;
  return FValue::integer(numElements(args.args[0].type.shape));
}

//===----------------------------------------------------------------------===//
// Join, split, interleave, cat
//===----------------------------------------------------------------------===//

/// `b` as the first operand's integer type where the two are integers of one
/// width and either signedness: one MLIR type, which upstream joins and
/// concatenates as the first operand's (int8 with uint8 is int8).
FValue asFirstOperandSignedness(const FValue &a, const FValue &b) {
  DType ea = a.type.element, eb = b.type.element;
  if (ea == eb || a.type.isPointer || b.type.isPointer || !ea.isInteger() ||
      !eb.isInteger() || ea.isBool() || eb.isBool() ||
      ea.getBitWidth() != eb.getBitWidth())
    return b;
  TritonType retyped = b.type;
  retyped.element = ea;
  return FValue::runtime(b.value, retyped);
}

/// Two operands of one dtype, broadcast to one shape.
std::optional<std::pair<FValue, FValue>>
sameTypePair(Emitter &e, const ArgReader &r, StringRef name, SMLoc loc) {
  std::optional<FValue> a = requireBlock(e, r, 0, true);
  std::optional<FValue> b = a ? requireBlock(e, r, 1, true) : std::nullopt;
  if (!b)
    return std::nullopt;
  b = asFirstOperandSignedness(*a, *b);
  TritonType ta = a->type.scalar(), tb = b->type.scalar();
  if (ta != tb)
    return e.error(loc, name + " needs operands of one dtype, got " + ta.str() +
                            " and " + tb.str());
  auto shape = e.broadcastShapes(a->type.shape, b->type.shape, loc);
  if (!shape)
    return std::nullopt;
  a = e.broadcastTo(*a, *shape, r.loc(0));
  b = a ? e.broadcastTo(*b, *shape, r.loc(1)) : std::nullopt;
  if (!b)
    return std::nullopt;
  return std::make_pair(*a, *b);
}

std::optional<FValue> joinValues(Emitter &e, FValue a, FValue b, SMLoc loc) {
  bool scalars = !a.type.isBlock();
  if (scalars) {
    a = expandDims(e, a, 0, loc);
    b = expandDims(e, b, 0, loc);
  }
  llvm::SmallVector<int64_t> shape(a.type.shape);
  shape.push_back(2);
  TritonType type = a.type.withShape(shape);
  mlir::Value r =
      kiln::JoinOp::create(e.getBuilder(), e.location(loc),
                           type.toMLIR(e.getContext()), a.value, b.value);
  FValue joined = FValue::runtime(r, type);
  return scalars ? reshapeTo(e, joined, {2}, false, loc) : joined;
}

std::optional<FValue> join(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"a", "b"};
  ArgReader r(e, args, "tl.join", kParams);
  if (!r.isOk())
    return std::nullopt;
  auto pair = sameTypePair(e, r, "tl.join", args.loc);
  if (!pair)
    return std::nullopt;
  return joinValues(e, pair->first, pair->second, args.loc);
}

std::optional<FValue> split(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"a"};
  ArgReader r(e, args, "tl.split", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> a = requireBlock(e, r, 0);
  if (!a)
    return std::nullopt;
  if (a->type.shape.back() != 2)
    return e.error(args.loc, "tl.split needs a block whose last dimension has "
                             "size 2, got shape " +
                                 formatShape(a->type.shape));
  TritonType type =
      a->type.withShape(llvm::ArrayRef<int64_t>(a->type.shape).drop_back());
  mlir::Type t = type.toMLIR(e.getContext());
  auto op = kiln::SplitOp::create(e.getBuilder(), e.location(args.loc), t, t,
                                  a->value);
  return FValue::tuple(
      {FValue::runtime(op.getLhs(), type), FValue::runtime(op.getRhs(), type)});
}

std::optional<FValue> interleave(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"a", "b"};
  ArgReader r(e, args, "tl.interleave", kParams);
  if (!r.isOk())
    return std::nullopt;
  auto pair = sameTypePair(e, r, "tl.interleave", args.loc);
  if (!pair)
    return std::nullopt;
  std::optional<FValue> c = joinValues(e, pair->first, pair->second, args.loc);
  if (!c || c->type.shape.size() == 1)
    return c;
  llvm::SmallVector<int64_t> shape(pair->first.type.shape);
  shape.back() *= 2;
  return reshapeTo(e, *c, shape, false, args.loc);
}

std::optional<FValue> cat(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "other", "can_reorder"};
  ArgReader r(e, args, "tl.cat", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> a = requireBlock(e, r, 0);
  std::optional<FValue> b = a ? requireBlock(e, r, 1) : std::nullopt;
  if (!b)
    return std::nullopt;
  if (!(r.get(2) && r.get(2)->isNumber() && r.get(2)->intValue))
    return e.error(args.loc, "tl.cat may reorder the elements it concatenates; "
                             "pass can_reorder=True to accept that");
  b = asFirstOperandSignedness(*a, *b);
  if (a->type != b->type)
    return e.error(args.loc, "tl.cat needs two blocks of one type, got " +
                                 a->type.str() + " and " + b->type.str());
  if (a->type.shape.size() != 1)
    return e.error(args.loc, "tl.cat joins 1-D blocks only, as in Triton; "
                             "got " +
                                 a->type.str() +
                                 " (tl.join and tl.reshape build larger ones)");
  llvm::SmallVector<int64_t> shape(a->type.shape);
  shape[0] *= 2;
  TritonType type = a->type.withShape(shape);
  mlir::Value v =
      kiln::CatOp::create(e.getBuilder(), e.location(args.loc),
                          type.toMLIR(e.getContext()), a->value, b->value);
  return FValue::runtime(v, type);
}

//===----------------------------------------------------------------------===//
// tl.gather
//===----------------------------------------------------------------------===//

// tl.gather(src, index, axis): out[.., i, ..] = src[.., index[.., i, ..], ..]
// along `axis`, index agreeing with src on the other dimensions. Small
// lookups (index elements x axis length up to kOneHotGatherWork: gemlite's
// 16-entry fp4 tables over a few rows) compare each output element's index
// with every position of the axis and sum the one match, src's bits as
// integers (exact: -0.0 and NaNs kept; an index out of range gives 0 bits):
// no shared memory, no barrier. Larger ones are a kiln.gather, through
// shared memory (one store per src element, one load per output element),
// whose compile time and work do not grow with the product.
constexpr int64_t kOneHotGatherWork = 8192;

std::optional<FValue> gather(Emitter &e, const CallArgs &args) {
  // desc.gather(x_offsets, y_offset) and desc.scatter: TMA's gather4 mode.
  if (!args.args.empty() && args.args.front().isDescriptor())
    return e.error(args.loc,
                   "tensor-descriptor gather and scatter (TMA's gather4 mode) "
                   "need sm_100 or later, and Kiln targets sm_80 to sm_90a "
                   "(upstream Triton's ptxas rejects them for sm_90a too); "
                   "load rows with tl.load or desc.load instead");
  static const StringRef kParams[] = {"src", "index", "axis"};
  ArgReader r(e, args, "tl.gather", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> src = requireBlock(e, r, 0);
  std::optional<FValue> index = src ? requireBlock(e, r, 1) : std::nullopt;
  if (!index)
    return std::nullopt;
  if (src->type.isPointer)
    return r.bad(0, "a block of numbers");
  if (index->type.isPointer || !index->type.element.isInteger() ||
      index->type.element.isBool())
    return r.bad(1, "a block of integers");
  int64_t rank = src->type.shape.size();
  if (int64_t(index->type.shape.size()) != rank)
    return e.error(args.loc, "tl.gather needs src and index of one rank, got " +
                                 formatShape(src->type.shape) + " and " +
                                 formatShape(index->type.shape));
  if (!r.get(2))
    return r.missing(2);
  std::optional<int64_t> axis =
      readAxis(e, *r.get(2), rank, r.loc(2), "the axis of tl.gather");
  if (!axis)
    return std::nullopt;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && src->type.shape[d] != index->type.shape[d])
      return e.error(args.loc,
                     "tl.gather needs index to match src on every dimension "
                     "but the axis (" +
                         std::to_string(*axis) + "), got " +
                         formatShape(src->type.shape) + " and " +
                         formatShape(index->type.shape));
  SMLoc loc = args.loc;
  int64_t size = src->type.shape[*axis];
  if (numElements(index->type.shape) * size > kOneHotGatherWork) {
    // The lowering reads the index as signed: widen narrow and unsigned
    // ones so that their values stay.
    DType indexType = index->type.element;
    FValue at = *index;
    if (indexType.getBitWidth() < 32)
      at = e.castTo(at, DType(ScalarKind::I32), loc);
    else if (indexType.getKind() == ScalarKind::U32)
      at = e.castTo(at, DType(ScalarKind::I64), loc);
    TritonType resultType = src->type.withShape(index->type.shape);
    mlir::Value v = kiln::GatherOp::create(
        e.getBuilder(), e.location(loc), resultType.toMLIR(e.getContext()),
        src->value, at.value, int32_t(*axis));
    return FValue::runtime(v, resultType);
  }
  // src's bits as integers of its width (bools as i8).
  DType element = src->type.element;
  FValue bits = *src;
  if (element.isBool()) {
    bits = e.castTo(*src, DType(ScalarKind::I8), loc);
  } else if (element.isFloat()) {
    TritonType intType = src->type;
    intType.element = DType::signedInteger(element.getBitWidth());
    std::optional<FValue> asInt = e.bitcastTo(*src, intType, loc);
    if (!asInt)
      return std::nullopt;
    bits = *asInt;
  }
  DType bitsElement = bits.type.element;
  // [.., 1, S, ..] against [.., I, 1, ..] and the positions 0..S-1 along
  // axis + 1.
  FValue table = expandDims(e, bits, *axis, loc);
  FValue wanted = expandDims(e, *index, *axis + 1, loc);
  std::optional<FValue> positions = callBuiltin(
      e, "tl.arange", {FValue::integer(0), FValue::integer(size)}, {}, loc);
  if (!positions)
    return std::nullopt;
  llvm::SmallVector<int64_t> positionShape(rank + 1, 1);
  positionShape[*axis + 1] = size;
  FValue along = reshapeTo(e, *positions, positionShape, false, loc);
  std::optional<FValue> match = e.binary("==", wanted, along, loc);
  std::optional<FValue> picked =
      match ? callBuiltin(e, "tl.where", {*match, table, FValue::integer(0)},
                          {}, loc)
            : std::nullopt;
  std::optional<FValue> sum =
      picked ? callBuiltin(e, "tl.sum", {*picked},
                           {{"axis", FValue::integer(*axis + 1)}}, loc)
             : std::nullopt;
  if (!sum)
    return std::nullopt;
  FValue result = e.castTo(*sum, bitsElement, loc);
  if (element.isBool())
    return e.castTo(result, element, loc);
  if (element.isFloat())
    return e.bitcastTo(result, src->type.withShape(index->type.shape), loc);
  return result;
}

//===----------------------------------------------------------------------===//
// tl.histogram
//===----------------------------------------------------------------------===//

// tl.histogram(input, num_bins, mask=None): how many of input's elements
// (those mask keeps) equal each of 0 .. num_bins-1, as int32; others count
// nowhere. Small ones (num_bins x N up to kOneHotGatherWork: native-sparse-
// attention's block counts) compare each bin with every element and sum the
// matches; larger ones are a kiln.histogram, counted with shared-memory
// atomics as upstream does.
std::optional<FValue> histogram(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"input", "num_bins", "mask"};
  ArgReader r(e, args, "tl.histogram", kParams);
  if (!r.isOk())
    return std::nullopt;
  std::optional<FValue> input = requireBlock(e, r, 0);
  if (!input)
    return std::nullopt;
  if (input->type.shape.size() != 1 || input->type.isPointer ||
      !input->type.element.isInteger() || input->type.element.isBool())
    return r.bad(0, "a 1-D block of integers");
  std::optional<int64_t> bins = r.constInt(1);
  if (!bins)
    return std::nullopt;
  SMLoc loc = args.loc;
  std::optional<FValue> mask;
  if (r.get(2) && !r.get(2)->isNone()) {
    mask = requireBlock(e, r, 2);
    if (!mask)
      return std::nullopt;
    if (mask->type.shape != input->type.shape)
      return r.bad(2,
                   "a mask of input's shape " + formatShape(input->type.shape));
    mask = e.castTo(*mask, DType(ScalarKind::I1), loc);
  }
  if (*bins < 1)
    return r.bad(1, "a positive number of bins");
  if (*bins * numElements(input->type.shape) > kOneHotGatherWork) {
    // The lowering reads values as signed: widen narrow and unsigned ones.
    DType valueType = input->type.element;
    FValue values = *input;
    if (valueType.getBitWidth() < 32)
      values = e.castTo(values, DType(ScalarKind::I32), loc);
    else if (valueType.getKind() == ScalarKind::U32)
      values = e.castTo(values, DType(ScalarKind::I64), loc);
    TritonType resultType{DType(ScalarKind::I32), false, {*bins}};
    mlir::Value v = kiln::HistogramOp::create(
        e.getBuilder(), e.location(loc), resultType.toMLIR(e.getContext()),
        values.value, mask ? mask->value : mlir::Value());
    return FValue::runtime(v, resultType);
  }
  // [1, N] against the bins [B, 1].
  FValue values = expandDims(e, *input, 0, loc);
  std::optional<FValue> range = callBuiltin(
      e, "tl.arange", {FValue::integer(0), FValue::integer(*bins)}, {}, loc);
  if (!range)
    return std::nullopt;
  FValue column = expandDims(e, *range, 1, loc);
  std::optional<FValue> match = e.binary("==", values, column, loc);
  if (match && mask)
    match = e.binary("&", *match, expandDims(e, *mask, 0, loc), loc);
  if (!match)
    return std::nullopt;
  FValue ones = e.castTo(*match, DType(ScalarKind::I32), loc);
  std::optional<FValue> counts =
      callBuiltin(e, "tl.sum", {ones}, {{"axis", FValue::integer(1)}}, loc);
  if (!counts)
    return std::nullopt;
  return e.castTo(*counts, DType(ScalarKind::I32), loc);
}

} // namespace

void kiln::frontend::addShapeBuiltins(BuiltinTable &table) {
  static const std::pair<const char *, BuiltinFn> kEntries[] = {
      {"__subscript__", subscript},
      {"property.T", propertyT},
      {"property.numel", propertyNumel},
      {"tl.broadcast", broadcast},
      {"tl.broadcast_to", broadcastToShape},
      {"method.broadcast_to", broadcastToShape},
      {"tl.expand_dims", expandDimsBuiltin},
      {"method.expand_dims", expandDimsBuiltin},
      {"tl.reshape", reshape},
      {"method.reshape", reshape},
      {"tl.view", view},
      {"method.view", view},
      {"tl.ravel", ravel},
      {"method.ravel", ravel},
      {"tl.trans", trans},
      {"method.trans", trans},
      {"tl.permute", permute},
      {"method.permute", permute},
      {"tl.join", join},
      {"tl.split", split},
      {"method.split", split},
      {"tl.interleave", interleave},
      {"tl.cat", cat},
      {"tl.gather", gather},
      {"tl.histogram", histogram},
      {"method.histogram", histogram},
      {"method.gather", gather},
  };
  for (const auto &[name, fn] : kEntries)
    table[name] = fn;
}
