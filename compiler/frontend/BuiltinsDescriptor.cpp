//===- BuiltinsDescriptor.cpp - tensor descriptors ------------------------===//
//
// tl.make_tensor_descriptor and the methods of a tensor descriptor (one made
// in the kernel, or a `tensordesc<...>` kernel parameter): desc.load,
// desc.store, desc.atomic_add/min/max/and/or/xor, with
// tl.load_tensor_descriptor and tl.store_tensor_descriptor; and Python's
// isinstance, which upstream kernels use to accept a pointer or a
// descriptor (`isinstance(desc_or_ptr, tl.tensor_descriptor)`). Argument
// rules follow upstream Triton's semantic.py.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/IR/Matchers.h"

using namespace kiln::frontend;

namespace {

constexpr size_t kMaxDescriptorRank = 5;

/// Integers, one per dimension, as run-time values of `kind` (i32 or i64):
/// compile-time ints, or run-time integer scalars (64-bit ones are refused
/// where `kind` is i32, as upstream refuses them for offsets).
std::optional<llvm::SmallVector<mlir::Value>>
readIntegers(Emitter &e, const ArgReader &r, size_t i, ScalarKind kind,
             StringRef what, bool truncate64) {
  const FValue *v = r.get(i);
  if (!v)
    return r.missing(i);
  llvm::SmallVector<mlir::Value> values;
  TritonType type{DType(kind), false, {}};
  for (const FValue &d : flattenVarargs(*v)) {
    if (d.isInt()) {
      values.push_back(e.constant(d, type, r.loc(i)).value);
      continue;
    }
    if (!d.isRuntime() || d.type.isBlock() || d.type.isPointer ||
        !d.type.element.isInteger() || d.type.element.isBool()) {
      r.bad(i, "a list of integers (" + what + ")");
      return std::nullopt;
    }
    if (kind == ScalarKind::I32 && !truncate64 &&
        d.type.element.getBitWidth() == 64) {
      e.error(r.loc(i), "tensor descriptor " + what +
                            " are 32-bit; convert with .to(tl.int32), got " +
                            d.type.str());
      return std::nullopt;
    }
    values.push_back(e.castTo(d, DType(kind), r.loc(i)).value);
  }
  return values;
}

/// The tensor descriptor argument `i`, or an error.
const FValue *readDescriptor(const ArgReader &r, size_t i) {
  const FValue *v = r.get(i);
  if (!v) {
    r.missing(i);
    return nullptr;
  }
  if (!v->isDescriptor()) {
    r.bad(i, "a tensor descriptor (tl.make_tensor_descriptor or a "
             "tensordesc parameter)");
    return nullptr;
  }
  return v;
}

/// The offsets of an access through `desc`: one i32 per dimension.
std::optional<llvm::SmallVector<mlir::Value>>
readOffsets(Emitter &e, const ArgReader &r, size_t i, const FValue &desc,
            SMLoc loc) {
  auto offsets =
      readIntegers(e, r, i, ScalarKind::I32, "offsets", /*truncate64=*/false);
  if (!offsets)
    return std::nullopt;
  size_t rank = desc.type.blockShape.size();
  if (offsets->size() != rank)
    return e.error(loc, "a tensor descriptor of rank " + std::to_string(rank) +
                            " needs " + std::to_string(rank) +
                            " offsets, got " + std::to_string(offsets->size()));
  return offsets;
}

/// The block type of `desc`: what a load gives and a store takes.
TritonType blockTypeOf(const FValue &desc) {
  return TritonType{desc.type.element, false, desc.type.blockShape};
}

/// A value stored or combined through `desc`: a block of the descriptor's
/// block shape, converted to its element type.
std::optional<FValue> readBlockValue(Emitter &e, const ArgReader &r, size_t i,
                                     const FValue &desc, StringRef builtin) {
  const FValue *value = r.get(i);
  if (!value)
    return r.missing(i);
  TritonType block = blockTypeOf(desc);
  if (!value->isRuntime() || value->type.isPointer || !value->type.isBlock())
    return r.bad(i, "a block of shape " + formatShape(block.shape));
  if (value->type.shape != block.shape)
    return e.error(r.loc(i), builtin + " through a descriptor of block shape " +
                                 formatShape(block.shape) +
                                 " needs a value of that shape, got " +
                                 formatShape(value->type.shape));
  return e.castTo(*value, block.element, r.loc(i));
}

std::optional<FValue> makeTensorDescriptor(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"base", "shape", "strides", "block_shape",
                                      "padding_option"};
  ArgReader r(e, args, "tl.make_tensor_descriptor", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *base = r.get(0);
  if (!base)
    return r.missing(0);
  if (!base->isRuntime() || !base->type.isPointer || base->type.isBlock() ||
      base->type.isBlockPointer())
    return r.bad(0, "a scalar pointer");
  DType element = base->type.element;
  if (element.isBool())
    return r.bad(0, "a pointer to numbers (not int1)");
  if (!r.get(3))
    return r.missing(3);
  auto blockShape = readShape(e, *r.get(3), r.loc(3),
                              "the block_shape of tl.make_tensor_descriptor");
  if (!blockShape)
    return std::nullopt;
  size_t rank = blockShape->size();
  if (rank < 1 || rank > kMaxDescriptorRank)
    return e.error(r.loc(3), "tensor descriptors have 1 to 5 dimensions, got " +
                                 std::to_string(rank));
  int64_t rowBytes = blockShape->back() * element.getBitWidth() / 8;
  if (rowBytes < 16)
    return e.error(r.loc(3),
                   "a descriptor's block must span at least 16 bytes in its "
                   "last dimension, got " +
                       std::to_string(blockShape->back()) + " x " +
                       std::to_string(element.getBitWidth() / 8) + " = " +
                       std::to_string(rowBytes) + " bytes");
  // The last stride must be the constant 1 (the tensor is contiguous along
  // its last dimension), as upstream requires: a literal 1, or a stride
  // parameter the signature says equals 1 (`:1`, upstream's equal-to-1
  // specialization, which makes it a constexpr there).
  auto isOne = [](const FValue &v) {
    if (v.isInt())
      return v.intValue == 1;
    return v.kind == FValue::Kind::Runtime && v.value &&
           mlir::matchPattern(v.value, mlir::m_One());
  };
  if (const FValue *strides = r.get(2)) {
    std::vector<FValue> list = flattenVarargs(*strides);
    if (!list.empty() && !isOne(list.back()))
      return e.error(r.loc(2), "the last stride of a tensor descriptor must "
                               "be the constant 1, got " +
                                   list.back().describe());
  }
  auto shape = readIntegers(e, r, 1, ScalarKind::I32, "shape",
                            /*truncate64=*/true);
  auto strides = shape ? readIntegers(e, r, 2, ScalarKind::I64, "strides",
                                      /*truncate64=*/true)
                       : std::nullopt;
  if (!strides)
    return std::nullopt;
  if (shape->size() != rank || strides->size() != rank)
    return e.error(args.loc, "tl.make_tensor_descriptor needs shape, strides "
                             "and block_shape of one length, got " +
                                 std::to_string(shape->size()) + ", " +
                                 std::to_string(strides->size()) + " and " +
                                 std::to_string(rank));
  kiln::PaddingOption padding = kiln::PaddingOption::Zero;
  if (const FValue *p = r.get(4)) {
    if (p->kind != FValue::Kind::String ||
        (p->text != "zero" && p->text != "nan"))
      return r.bad(4, "\"zero\" or \"nan\"");
    if (p->text == "nan") {
      if (element.isInteger())
        return e.error(r.loc(4), "padding_option \"nan\" needs a "
                                 "floating-point tensor, got " +
                                     element.getLanguageName().str());
      padding = kiln::PaddingOption::NaN;
    }
  }
  TritonType type = TritonType::tensorDescriptor(element, *blockShape);
  mlir::Value desc = kiln::MakeTensorDescOp::create(
      e.getBuilder(), e.location(args.loc), type.toMLIR(e.getContext()),
      base->value, *shape, *strides, mlir::Value(), padding);
  std::vector<FValue> shapeValues, strideValues;
  for (mlir::Value v : *shape)
    shapeValues.push_back(
        FValue::runtime(v, TritonType{DType(ScalarKind::I32), false, {}}));
  for (mlir::Value v : *strides)
    strideValues.push_back(
        FValue::runtime(v, TritonType{DType(ScalarKind::I64), false, {}}));
  return FValue::descriptor(desc, type, std::move(shapeValues),
                            std::move(strideValues));
}

std::optional<FValue> descriptorLoad(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"desc", "offsets"};
  ArgReader r(e, args, "tensor_descriptor.load", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *desc = readDescriptor(r, 0);
  if (!desc)
    return std::nullopt;
  auto offsets = readOffsets(e, r, 1, *desc, args.loc);
  if (!offsets)
    return std::nullopt;
  TritonType block = blockTypeOf(*desc);
  mlir::Value v = kiln::DescriptorLoadOp::create(
      e.getBuilder(), e.location(args.loc), block.toMLIR(e.getContext()),
      desc->value, *offsets, kiln::CacheModifier::None,
      kiln::EvictionPolicy::Normal);
  return FValue::runtime(v, block);
}

std::optional<FValue> descriptorStore(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"desc", "offsets", "value"};
  ArgReader r(e, args, "tensor_descriptor.store", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *desc = readDescriptor(r, 0);
  if (!desc)
    return std::nullopt;
  auto offsets = readOffsets(e, r, 1, *desc, args.loc);
  std::optional<FValue> value =
      offsets ? readBlockValue(e, r, 2, *desc, "tensor_descriptor.store")
              : std::nullopt;
  if (!value)
    return std::nullopt;
  kiln::DescriptorStoreOp::create(e.getBuilder(), e.location(args.loc),
                                  desc->value, value->value, *offsets);
  return FValue::none();
}

/// desc.atomic_<op>(offsets, value): the element types upstream allows.
std::optional<FValue> descriptorReduce(Emitter &e, const CallArgs &args,
                                       StringRef op) {
  static const StringRef kParams[] = {"desc", "offsets", "value"};
  std::string builtin = ("tensor_descriptor.atomic_" + op).str();
  ArgReader r(e, args, builtin, kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *desc = readDescriptor(r, 0);
  if (!desc)
    return std::nullopt;
  DType t = desc->type.element;
  using K = ScalarKind;
  llvm::SmallVector<K> allowed;
  if (op == "add")
    allowed = {K::U32, K::I32, K::U64, K::F32, K::F16, K::BF16};
  else if (op == "min" || op == "max")
    allowed = {K::U32, K::I32, K::U64, K::I64};
  else
    allowed = {K::U32, K::I32, K::U64, K::I64};
  if (!llvm::is_contained(allowed, t.getKind())) {
    std::string names;
    for (K k : allowed)
      names += (names.empty() ? "" : ", ") + DType(k).getLanguageName().str();
    std::string note =
        (op == "min" || op == "max") && t.isFloat() && t.getBitWidth() == 16
            ? " (16-bit floats need TMA reductions, which Kiln "
              "does not emit yet)"
            : "";
    return e.error(args.loc, builtin + " supports " + names +
                                 " elements, got " + t.getLanguageName().str() +
                                 note);
  }
  auto offsets = readOffsets(e, r, 1, *desc, args.loc);
  std::optional<FValue> value =
      offsets ? readBlockValue(e, r, 2, *desc, builtin) : std::nullopt;
  if (!value)
    return std::nullopt;
  using R = kiln::RMWOp;
  R kind = op == "add"   ? (t.isFloat() ? R::FAdd : R::Add)
           : op == "max" ? (t.isUnsigned() ? R::UMax : R::Max)
           : op == "min" ? (t.isUnsigned() ? R::UMin : R::Min)
           : op == "and" ? R::And
           : op == "or"  ? R::Or
                         : R::Xor;
  kiln::DescriptorReduceOp::create(e.getBuilder(), e.location(args.loc), kind,
                                   desc->value, value->value, *offsets);
  return FValue::none();
}

/// `x.store(...)`: a descriptor's store, else tl.store (a tensor method
/// upstream).
std::optional<FValue> methodStore(Emitter &e, const CallArgs &args) {
  if (!args.args.empty() && args.args.front().isDescriptor())
    return descriptorStore(e, args);
  return lookupBuiltin("tl.store")(e, args);
}

std::optional<FValue> methodLoad(Emitter &e, const CallArgs &args) {
  if (!args.args.empty() && args.args.front().isDescriptor())
    return descriptorLoad(e, args);
  return e.error(args.loc, "'.load' is a method of tensor descriptors; load "
                           "through pointers with tl.load");
}

/// `x.atomic_<op>(...)`: a descriptor's reduction, else tl.atomic_<op> (a
/// tensor method upstream).
#define KILN_DESCRIPTOR_ATOMIC(fn, name)                                       \
  std::optional<FValue> fn(Emitter &e, const CallArgs &args) {                 \
    if (!args.args.empty() && args.args.front().isDescriptor())                \
      return descriptorReduce(e, args, name);                                  \
    return lookupBuiltin("tl.atomic_" name)(e, args);                          \
  }
KILN_DESCRIPTOR_ATOMIC(methodAtomicAdd, "add")
KILN_DESCRIPTOR_ATOMIC(methodAtomicMin, "min")
KILN_DESCRIPTOR_ATOMIC(methodAtomicMax, "max")
KILN_DESCRIPTOR_ATOMIC(methodAtomicAnd, "and")
KILN_DESCRIPTOR_ATOMIC(methodAtomicOr, "or")
KILN_DESCRIPTOR_ATOMIC(methodAtomicXor, "xor")
#undef KILN_DESCRIPTOR_ATOMIC

//===----------------------------------------------------------------------===//
// isinstance
//===----------------------------------------------------------------------===//

/// Whether `v` is an instance of the class `cls` (a tuple: of any), or
/// std::nullopt after an error for a class Kiln does not know.
std::optional<bool> isInstance(Emitter &e, const FValue &v, const FValue &cls,
                               SMLoc loc) {
  if (cls.kind == FValue::Kind::Tuple) {
    bool any = false;
    for (const FValue &c : cls.elements) {
      std::optional<bool> one = isInstance(e, v, c, loc);
      if (!one)
        return std::nullopt;
      any |= *one;
    }
    return any;
  }
  using K = FValue::Kind;
  StringRef name = cls.text;
  if (cls.kind == K::Builtin || cls.kind == K::Marker) {
    if (name == "tl.tensor_descriptor" || name == "tl.tensor_descriptor_base")
      return v.isDescriptor();
    if (name == "tl.tensor")
      return v.isRuntime();
    // Upstream unwraps constexprs before calling Python's builtins, so no
    // value in a kernel is an instance of tl.constexpr (checked with 3.6:
    // parameters, literals, globals, tl.constexpr(3)).
    if (name == "tl.constexpr")
      return false;
    if (name == "tl.dtype")
      return v.kind == K::DType;
    if (name == "int")
      return v.kind == K::Int || v.kind == K::Bool;
    if (name == "bool")
      return v.kind == K::Bool;
    if (name == "float")
      return v.kind == K::Float;
    if (name == "str")
      return v.kind == K::String;
    if (name == "tuple" || name == "list" || name == "tl.tuple")
      return v.kind == K::Tuple;
  }
  e.error(loc, "isinstance with " + cls.describe() +
                   " is not supported (Kiln knows tl.tensor_descriptor, "
                   "tl.tensor, tl.constexpr, tl.dtype, int, bool, float, str "
                   "and tuple)");
  return std::nullopt;
}

std::optional<FValue> pyIsInstance(Emitter &e, const CallArgs &args) {
  if (args.args.size() != 2 || !args.keywords.empty())
    return e.error(args.loc, "isinstance takes two arguments");
  std::optional<bool> result =
      isInstance(e, args.args[0], args.args[1], args.argLocs[1]);
  if (!result)
    return std::nullopt;
  return FValue::boolean(*result);
}

} // namespace

void kiln::frontend::addDescriptorBuiltins(BuiltinTable &table) {
  static const std::pair<const char *, BuiltinFn> kEntries[] = {
      {"tl.make_tensor_descriptor", makeTensorDescriptor},
      {"tl.load_tensor_descriptor", descriptorLoad},
      {"tl.store_tensor_descriptor", descriptorStore},
      {"method.load", methodLoad},
      {"method.store", methodStore},
      {"method.atomic_add", methodAtomicAdd},
      {"method.atomic_min", methodAtomicMin},
      {"method.atomic_max", methodAtomicMax},
      {"method.atomic_and", methodAtomicAnd},
      {"method.atomic_or", methodAtomicOr},
      {"method.atomic_xor", methodAtomicXor},
      {"isinstance", pyIsInstance},
  };
  for (const auto &[name, fn] : kEntries)
    table[name] = fn;
}
