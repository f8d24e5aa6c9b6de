//===- BuiltinsMemory.cpp - loads, stores, atomics, block pointers, dot ---===//
//
// tl.load/tl.store through blocks of pointers (mask, other) or block
// pointers (boundary_check, padding_option), with cache modifiers, eviction
// policies and volatility recorded on kiln.load/kiln.store; the atomics;
// tl.make_block_ptr/tl.advance; tl.dot. Argument rules follow upstream
// Triton's semantic.py.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace kiln::frontend;

namespace {

//===----------------------------------------------------------------------===//
// Access options
//===----------------------------------------------------------------------===//

/// A string option: its value, or "" when omitted.
std::optional<std::string> readString(const ArgReader &r, size_t i) {
  const FValue *v = r.get(i);
  if (!v)
    return std::string();
  if (v->kind != FValue::Kind::String) {
    r.bad(i, "a string");
    return std::nullopt;
  }
  return v->text;
}

std::optional<kiln::CacheModifier> readCache(const ArgReader &r, size_t i,
                                             bool isLoad) {
  auto s = readString(r, i);
  if (!s)
    return std::nullopt;
  using C = kiln::CacheModifier;
  if (s->empty())
    return C::None;
  std::optional<C> c = isLoad ? llvm::StringSwitch<std::optional<C>>(*s)
                                    .Case(".ca", C::CA)
                                    .Case(".cg", C::CG)
                                    .Case(".cv", C::CV)
                                    .Default(std::nullopt)
                              : llvm::StringSwitch<std::optional<C>>(*s)
                                    .Case(".wb", C::WB)
                                    .Case(".cg", C::CG)
                                    .Case(".cs", C::CS)
                                    .Case(".wt", C::WT)
                                    .Default(std::nullopt);
  if (!c)
    r.bad(i, isLoad ? "one of \"\", \".ca\", \".cg\", \".cv\""
                    : "one of \"\", \".wb\", \".cg\", \".cs\", \".wt\"");
  return c;
}

std::optional<kiln::EvictionPolicy> readEviction(const ArgReader &r, size_t i) {
  auto s = readString(r, i);
  if (!s)
    return std::nullopt;
  using P = kiln::EvictionPolicy;
  std::optional<P> p = llvm::StringSwitch<std::optional<P>>(*s)
                           .Case("", P::Normal)
                           .Case("evict_normal", P::Normal)
                           .Case("evict_first", P::EvictFirst)
                           .Case("evict_last", P::EvictLast)
                           .Default(std::nullopt);
  if (!p)
    r.bad(i, "one of \"\", \"evict_first\", \"evict_last\"");
  return p;
}

/// boundary_check: an int or a tuple of distinct dimensions of the block.
std::optional<llvm::SmallVector<int32_t>>
readBoundaryCheck(Emitter &e, const ArgReader &r, size_t i, int64_t rank) {
  llvm::SmallVector<int32_t> dims;
  const FValue *v = r.get(i);
  if (!v)
    return dims;
  for (const FValue &d : flattenVarargs(*v)) {
    if (!d.isInt() || d.intValue < 0 || d.intValue >= rank) {
      r.bad(i,
            "dimensions of the block (0 to " + std::to_string(rank - 1) + ")");
      return std::nullopt;
    }
    if (llvm::is_contained(dims, int32_t(d.intValue))) {
      e.error(r.loc(i), "boundary_check lists dimension " +
                            intText(d.intValue) + " twice");
      return std::nullopt;
    }
    dims.push_back(int32_t(d.intValue));
  }
  llvm::sort(dims);
  return dims;
}

/// A mask argument: i1, broadcast to the pointer's shape.
std::optional<FValue> readMask(Emitter &e, const FValue &mask, SMLoc loc,
                               llvm::ArrayRef<int64_t> shape,
                               StringRef builtin) {
  std::optional<FValue> m = e.materialize(mask, loc);
  if (!m)
    return std::nullopt;
  if (m->type.isPointer)
    return e.error(loc, "the mask of " + builtin + " must be a boolean, got " +
                            m->type.str());
  if (shape.empty() && m->type.isBlock())
    return e.error(loc, "the mask of " + builtin +
                            " cannot be a block when the pointer is a scalar");
  if (!m->type.element.isBool())
    m = e.castTo(*m, DType(ScalarKind::I1), loc);
  return e.broadcastTo(*m, shape, loc);
}

/// A value stored or combined through `ptr`: converted to the pointee type
/// and broadcast to the pointer's shape.
std::optional<FValue> readValue(Emitter &e, const ArgReader &r, size_t i,
                                const TritonType &type, StringRef builtin) {
  const FValue *value = r.get(i);
  if (!value)
    return r.missing(i);
  if (value->isNumber())
    return e.constant(*value, type, r.loc(i));
  if (!value->isRuntime() || value->type.isBlockPointer() ||
      value->type.isTensorDescriptor())
    return r.bad(i, "a number or a tensor of numbers");
  // A pointer stored as its address (a table of device pointers), as
  // upstream's cast to the pointee type converts it: only to 64-bit ints.
  if (value->type.isPointer &&
      !(type.element.isInteger() && type.element.getBitWidth() == 64))
    return r.bad(i, "a number or a tensor of numbers (a pointer only "
                    "through an int64 or uint64 pointer, as its address)");
  if (type.shape.empty() && value->type.isBlock())
    return e.error(r.loc(i), "the value of " + builtin +
                                 " cannot be a block when the pointer is a "
                                 "scalar");
  std::optional<FValue> converted =
      value->type.isPointer
          ? e.bitcastTo(*value, TritonType{type.element, false, {}}, r.loc(i))
          : std::optional<FValue>(e.castTo(*value, type.element, r.loc(i)));
  if (!converted)
    return std::nullopt;
  return e.broadcastTo(*converted, type.shape, r.loc(i));
}

//===----------------------------------------------------------------------===//
// tl.load / tl.store
//===----------------------------------------------------------------------===//

/// Pointers to int1 address bytes, as in Triton: they are accessed as int8.
FValue asBytePointer(Emitter &e, const FValue &ptr, SMLoc loc) {
  if (!ptr.type.element.isBool())
    return ptr;
  TritonType bytes = ptr.type;
  bytes.element = DType(ScalarKind::I8);
  return *e.bitcastTo(ptr, bytes.scalar(), loc); // a kiln.ptr_cast
}

std::optional<FValue> load(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {
      "pointer",        "mask",           "other",           "boundary_check",
      "padding_option", "cache_modifier", "eviction_policy", "volatile"};
  ArgReader r(e, args, "tl.load", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *ptr = r.get(0);
  if (!ptr)
    return r.missing(0);
  if (!ptr->isRuntime() || !ptr->type.isPointer)
    return r.bad(0, "a pointer, a block of pointers or a block pointer");
  auto cache = readCache(r, 5, true);
  auto evict = cache ? readEviction(r, 6) : std::nullopt;
  auto padding = evict ? readString(r, 4) : std::nullopt;
  if (!padding)
    return std::nullopt;
  bool isVolatile = r.get(7) && r.get(7)->isNumber() && r.get(7)->intValue;
  auto &b = e.getBuilder();
  mlir::Location l = e.location(args.loc);

  if (ptr->type.isBlockPointer()) {
    if (r.get(1) || r.get(2))
      return e.error(r.loc(r.get(1) ? 1 : 2),
                     "tl.load through a block pointer takes no mask or "
                     "other; use boundary_check and padding_option");
    TritonType type{ptr->type.element, false, ptr->type.blockShape};
    auto checks = readBoundaryCheck(e, r, 3, type.shape.size());
    if (!checks)
      return std::nullopt;
    kiln::PaddingOptionAttr pad;
    if (!padding->empty()) {
      if (*padding != "zero" && *padding != "nan")
        return r.bad(4, "\"zero\" or \"nan\"");
      if (*padding == "nan" && type.element.isInteger())
        return e.error(r.loc(4), "padding_option \"nan\" needs a "
                                 "floating-point block, got " +
                                     type.str());
      pad = kiln::PaddingOptionAttr::get(
          e.getContext(), *padding == "nan" ? kiln::PaddingOption::NaN
                                            : kiln::PaddingOption::Zero);
    }
    mlir::Value v =
        kiln::LoadOp::create(b, l, type.toMLIR(e.getContext()), ptr->value,
                             mlir::Value(), mlir::Value(),
                             checks->empty() ? mlir::DenseI32ArrayAttr()
                                             : b.getDenseI32ArrayAttr(*checks),
                             pad, *cache, *evict, isVolatile);
    return FValue::runtime(v, type);
  }

  if (r.get(3) && !flattenVarargs(*r.get(3)).empty())
    return e.error(r.loc(3), "boundary_check needs a block pointer "
                             "(tl.make_block_ptr); with a block of pointers, "
                             "use a mask");
  if (!padding->empty())
    return e.error(r.loc(4), "padding_option needs a block pointer "
                             "(tl.make_block_ptr); with a block of pointers, "
                             "use other");
  // A block of pointers broadcasts with a larger mask or other (upstream
  // broadcasts both ways: `ptr[:, None]` under a [M, N] mask loads [M, N]).
  FValue pointers = *ptr;
  if (pointers.type.isBlock())
    for (size_t i : {size_t(1), size_t(2)}) {
      const FValue *arg = r.get(i);
      if (!arg || !arg->isRuntime() || !arg->type.isBlock() ||
          arg->type.shape == pointers.type.shape)
        continue;
      std::optional<llvm::SmallVector<int64_t>> shape =
          e.broadcastShapes(pointers.type.shape, arg->type.shape, r.loc(i));
      if (!shape)
        return std::nullopt;
      std::optional<FValue> wide = e.broadcastTo(pointers, *shape, r.loc(0));
      if (!wide)
        return std::nullopt;
      pointers = *wide;
    }
  ptr = &pointers;
  TritonType resultType = ptr->type;
  resultType.isPointer = false;
  bool isBool = resultType.element.isBool();
  FValue bytePtr = asBytePointer(e, *ptr, args.loc);
  mlir::Value maskValue, otherValue;
  if (const FValue *mask = r.get(1)) {
    std::optional<FValue> m =
        readMask(e, *mask, r.loc(1), ptr->type.shape, "tl.load");
    if (!m)
      return std::nullopt;
    maskValue = m->value;
    if (r.get(2)) {
      std::optional<FValue> o = readValue(e, r, 2, resultType, "tl.load");
      if (!o)
        return std::nullopt;
      if (isBool)
        o = e.castTo(*o, DType(ScalarKind::I8), r.loc(2));
      otherValue = o->value;
    }
  } else if (r.get(2)) {
    return e.error(r.loc(2), "tl.load: 'other' needs a 'mask'");
  }
  TritonType loadType = resultType;
  loadType.element = bytePtr.type.element;
  mlir::Value v = kiln::LoadOp::create(
      b, l, loadType.toMLIR(e.getContext()), bytePtr.value, maskValue,
      otherValue, mlir::DenseI32ArrayAttr(), kiln::PaddingOptionAttr(), *cache,
      *evict, isVolatile);
  FValue loaded = FValue::runtime(v, loadType);
  return isBool ? e.castTo(loaded, DType(ScalarKind::I1), args.loc) : loaded;
}

std::optional<FValue> store(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"pointer",        "value",
                                      "mask",           "boundary_check",
                                      "cache_modifier", "eviction_policy"};
  ArgReader r(e, args, "tl.store", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *ptr = r.get(0);
  if (!ptr)
    return r.missing(0);
  if (!ptr->isRuntime() || !ptr->type.isPointer)
    return r.bad(0, "a pointer, a block of pointers or a block pointer");
  auto cache = readCache(r, 4, false);
  auto evict = cache ? readEviction(r, 5) : std::nullopt;
  if (!evict)
    return std::nullopt;
  auto &b = e.getBuilder();
  mlir::Location l = e.location(args.loc);

  if (ptr->type.isBlockPointer()) {
    if (r.get(2))
      return e.error(r.loc(2), "tl.store through a block pointer takes no "
                               "mask; use boundary_check");
    TritonType type{ptr->type.element, false, ptr->type.blockShape};
    const FValue *value = r.get(1);
    if (value && value->isRuntime() && value->type.isBlock() &&
        value->type.shape != type.shape)
      return e.error(r.loc(1), "tl.store through a block pointer of shape " +
                                   formatShape(type.shape) +
                                   " needs a value of that shape, got " +
                                   formatShape(value->type.shape));
    std::optional<FValue> v = readValue(e, r, 1, type, "tl.store");
    auto checks =
        v ? readBoundaryCheck(e, r, 3, type.shape.size()) : std::nullopt;
    if (!checks)
      return std::nullopt;
    kiln::StoreOp::create(b, l, ptr->value, v->value, mlir::Value(),
                          checks->empty() ? mlir::DenseI32ArrayAttr()
                                          : b.getDenseI32ArrayAttr(*checks),
                          *cache, *evict);
    return FValue::none();
  }

  if (r.get(3) && !flattenVarargs(*r.get(3)).empty())
    return e.error(r.loc(3), "boundary_check needs a block pointer "
                             "(tl.make_block_ptr); with a block of pointers, "
                             "use a mask");
  TritonType elementType = ptr->type;
  elementType.isPointer = false;
  std::optional<FValue> v = readValue(e, r, 1, elementType, "tl.store");
  if (!v)
    return std::nullopt;
  mlir::Value maskValue;
  if (const FValue *mask = r.get(2)) {
    std::optional<FValue> m =
        readMask(e, *mask, r.loc(2), ptr->type.shape, "tl.store");
    if (!m)
      return std::nullopt;
    maskValue = m->value;
  }
  FValue bytePtr = asBytePointer(e, *ptr, args.loc);
  FValue stored = e.castTo(*v, bytePtr.type.element, r.loc(1));
  kiln::StoreOp::create(b, l, bytePtr.value, stored.value, maskValue,
                        mlir::DenseI32ArrayAttr(), *cache, *evict);
  return FValue::none();
}

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

/// Run-time or compile-time integers converted to `type` (i64 for shapes and
/// strides, i32 for offsets), one per dimension.
std::optional<llvm::SmallVector<mlir::Value>>
readIndexList(Emitter &e, const ArgReader &r, size_t i, ScalarKind kind,
              StringRef what) {
  const FValue *v = r.get(i);
  if (!v)
    return r.missing(i);
  llvm::SmallVector<mlir::Value> values;
  TritonType type{DType(kind), false, {}};
  for (const FValue &d : flattenVarargs(*v)) {
    if (d.isInt() || d.kind == FValue::Kind::Bool) {
      values.push_back(e.constant(d, type, r.loc(i)).value);
      continue;
    }
    if (!d.isRuntime() || d.type.isBlock() || d.type.isPointer ||
        !d.type.element.isInteger()) {
      r.bad(i, "integers (" + what + ")");
      return std::nullopt;
    }
    if (kind == ScalarKind::I32 && d.type.element.getBitWidth() == 64) {
      e.error(r.loc(i), "block pointer offsets are 32-bit; convert with "
                        ".to(tl.int32), got " +
                            d.type.str());
      return std::nullopt;
    }
    values.push_back(e.castTo(d, DType(kind), r.loc(i)).value);
  }
  return values;
}

std::optional<FValue> makeBlockPtr(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"base",    "shape",       "strides",
                                      "offsets", "block_shape", "order"};
  ArgReader r(e, args, "tl.make_block_ptr", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *base = r.get(0);
  if (!base)
    return r.missing(0);
  if (!base->isRuntime() || !base->type.isPointer || base->type.isBlock() ||
      base->type.isBlockPointer())
    return r.bad(0, "a scalar pointer");
  auto shape = readIndexList(e, r, 1, ScalarKind::I64, "the tensor's shape");
  auto strides =
      shape ? readIndexList(e, r, 2, ScalarKind::I64, "strides") : std::nullopt;
  auto offsets = strides ? readIndexList(e, r, 3, ScalarKind::I32, "offsets")
                         : std::nullopt;
  if (!offsets)
    return std::nullopt;
  if (!r.get(4))
    return r.missing(4);
  auto blockShape =
      readShape(e, *r.get(4), r.loc(4), "the block_shape of tl.make_block_ptr");
  if (!blockShape)
    return std::nullopt;
  if (!r.get(5))
    return r.missing(5);
  llvm::SmallVector<int32_t> order;
  for (const FValue &d : flattenVarargs(*r.get(5))) {
    if (!d.isInt() || d.intValue < 0 ||
        d.intValue >= int64_t(blockShape->size()) ||
        llvm::is_contained(order, int32_t(d.intValue)))
      return r.bad(5, "a permutation of 0.." +
                          std::to_string(blockShape->size() - 1));
    order.push_back(int32_t(d.intValue));
  }
  size_t rank = blockShape->size();
  if (shape->size() != rank || strides->size() != rank ||
      offsets->size() != rank || order.size() != rank)
    return e.error(args.loc, "tl.make_block_ptr needs shape, strides, offsets, "
                             "block_shape and order of one length, got " +
                                 std::to_string(shape->size()) + ", " +
                                 std::to_string(strides->size()) + ", " +
                                 std::to_string(offsets->size()) + ", " +
                                 std::to_string(rank) + " and " +
                                 std::to_string(order.size()));
  FValue bytes = asBytePointer(e, *base, args.loc);
  TritonType type{bytes.type.element, true, {}, *blockShape};
  auto &b = e.getBuilder();
  mlir::Value v = kiln::MakeBlockPtrOp::create(
      b, e.location(args.loc), type.toMLIR(e.getContext()), bytes.value, *shape,
      *strides, *offsets, b.getDenseI32ArrayAttr(order));
  return FValue::runtime(v, type);
}

std::optional<FValue> advance(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"base", "offsets"};
  ArgReader r(e, args, "tl.advance", kParams);
  if (!r.isOk())
    return std::nullopt;
  const FValue *base = r.get(0);
  if (!base)
    return r.missing(0);
  if (!base->isRuntime() || !base->type.isBlockPointer())
    return r.bad(0, "a block pointer (tl.make_block_ptr)");
  auto offsets = readIndexList(e, r, 1, ScalarKind::I32, "offsets");
  if (!offsets)
    return std::nullopt;
  if (offsets->size() != base->type.blockShape.size())
    return e.error(args.loc, "tl.advance of a block pointer of rank " +
                                 std::to_string(base->type.blockShape.size()) +
                                 " needs as many offsets, got " +
                                 std::to_string(offsets->size()));
  mlir::Value v = kiln::AdvanceOp::create(e.getBuilder(), e.location(args.loc),
                                          base->value, *offsets);
  return FValue::runtime(v, base->type);
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

std::optional<kiln::MemSemantic> readSem(const ArgReader &r, size_t i) {
  auto s = readString(r, i);
  if (!s)
    return std::nullopt;
  using M = kiln::MemSemantic;
  auto m = llvm::StringSwitch<std::optional<M>>(*s)
               .Case("", M::AcqRel)
               .Case("acq_rel", M::AcqRel)
               .Case("acquire", M::Acquire)
               .Case("release", M::Release)
               .Case("relaxed", M::Relaxed)
               .Default(std::nullopt);
  if (!m)
    r.bad(i, "one of \"acq_rel\", \"acquire\", \"release\", \"relaxed\"");
  return m;
}

std::optional<kiln::MemScope> readScope(const ArgReader &r, size_t i) {
  auto s = readString(r, i);
  if (!s)
    return std::nullopt;
  using S = kiln::MemScope;
  auto m = llvm::StringSwitch<std::optional<S>>(*s)
               .Case("", S::GPU)
               .Case("gpu", S::GPU)
               .Case("cta", S::CTA)
               .Case("sys", S::System)
               .Default(std::nullopt);
  if (!m)
    r.bad(i, "one of \"gpu\", \"cta\", \"sys\"");
  return m;
}

/// The pointer of an atomic: pointers (not block pointers) to 16-, 32- or
/// 64-bit elements; fp16/bf16 only for add.
bool checkAtomicPointer(Emitter &e, const ArgReader &r, StringRef builtin,
                        bool onlyAdd16) {
  const FValue *ptr = r.get(0);
  if (!ptr) {
    r.missing(0);
    return false;
  }
  if (!ptr->isRuntime() || !ptr->type.isPointer || ptr->type.isBlockPointer()) {
    r.bad(0, "a pointer or a block of pointers");
    return false;
  }
  DType t = ptr->type.element;
  bool half = t.getKind() == ScalarKind::F16 || t.getKind() == ScalarKind::BF16;
  if (t.getBitWidth() < 16 || t.getKind() == ScalarKind::I16 ||
      t.getKind() == ScalarKind::U16 || (half && onlyAdd16)) {
    e.error(r.loc(0),
            builtin + " does not support " + t.getLanguageName() + " elements");
    return false;
  }
  return true;
}

std::optional<FValue> atomicRMW(Emitter &e, const CallArgs &args,
                                StringRef name, StringRef op) {
  static const StringRef kParams[] = {"pointer", "val", "mask", "sem", "scope"};
  std::string builtin = ("tl.atomic_" + name).str();
  ArgReader r(e, args, builtin, kParams);
  if (!r.isOk() || !checkAtomicPointer(e, r, builtin, op != "add"))
    return std::nullopt;
  const FValue &ptr = *r.get(0);
  TritonType type = ptr.type;
  type.isPointer = false;
  DType t = type.element;
  if ((op == "max" || op == "min") && t.isFloat() &&
      t.getKind() != ScalarKind::F32 && t.getKind() != ScalarKind::F64)
    return e.error(r.loc(0), builtin +
                                 " on floats needs fp32 or fp64 "
                                 "elements, got " +
                                 t.getLanguageName());
  // and/or/xor on fp32/fp64 work on the bits, as upstream's do.
  auto sem = readSem(r, 3);
  auto scope = sem ? readScope(r, 4) : std::nullopt;
  std::optional<FValue> val =
      scope ? readValue(e, r, 1, type, builtin) : std::nullopt;
  if (!val)
    return std::nullopt;
  mlir::Value maskValue;
  if (const FValue *mask = r.get(2)) {
    std::optional<FValue> m = readMask(e, *mask, r.loc(2), type.shape, builtin);
    if (!m)
      return std::nullopt;
    maskValue = m->value;
  }
  using K = kiln::RMWOp;
  bool isUnsigned = t.isUnsigned();
  K kind = op == "add"   ? (t.isFloat() ? K::FAdd : K::Add)
           : op == "max" ? (isUnsigned ? K::UMax : K::Max)
           : op == "min" ? (isUnsigned ? K::UMin : K::Min)
           : op == "and" ? K::And
           : op == "or"  ? K::Or
           : op == "xor" ? K::Xor
                         : K::Xchg;
  mlir::Value v =
      kiln::AtomicRMWOp::create(e.getBuilder(), e.location(args.loc), kind,
                                ptr.value, val->value, maskValue, *sem, *scope);
  return FValue::runtime(v, type);
}

#define KILN_ATOMIC(fn, name)                                                  \
  std::optional<FValue> fn(Emitter &e, const CallArgs &args) {                 \
    return atomicRMW(e, args, name, name);                                     \
  }
KILN_ATOMIC(atomicAdd, "add")
KILN_ATOMIC(atomicMax, "max")
KILN_ATOMIC(atomicMin, "min")
KILN_ATOMIC(atomicAnd, "and")
KILN_ATOMIC(atomicOr, "or")
KILN_ATOMIC(atomicXor, "xor")
KILN_ATOMIC(atomicXchg, "xchg")
#undef KILN_ATOMIC

std::optional<FValue> atomicCas(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"pointer", "cmp", "val", "sem", "scope"};
  ArgReader r(e, args, "tl.atomic_cas", kParams);
  if (!r.isOk() || !checkAtomicPointer(e, r, "tl.atomic_cas", false))
    return std::nullopt;
  const FValue &ptr = *r.get(0);
  TritonType type = ptr.type;
  type.isPointer = false;
  auto sem = readSem(r, 3);
  auto scope = sem ? readScope(r, 4) : std::nullopt;
  std::optional<FValue> cmp =
      scope ? readValue(e, r, 1, type, "tl.atomic_cas") : std::nullopt;
  std::optional<FValue> val =
      cmp ? readValue(e, r, 2, type, "tl.atomic_cas") : std::nullopt;
  if (!val)
    return std::nullopt;
  mlir::Value v = kiln::AtomicCASOp::create(
      e.getBuilder(), e.location(args.loc), type.toMLIR(e.getContext()),
      ptr.value, cmp->value, val->value, *sem, *scope);
  return FValue::runtime(v, type);
}

//===----------------------------------------------------------------------===//
// tl.dot
//===----------------------------------------------------------------------===//

/// `x` with dimension `axis` (of size `from`) repeated up to `to`: element
/// i of the new dimension is element i % from of the old.
FValue repeatAlong(Emitter &e, const FValue &x, int64_t axis, int64_t to,
                   SMLoc loc) {
  int64_t from = x.type.shape[axis];
  llvm::SmallVector<int64_t> wide(x.type.shape.begin(), x.type.shape.end());
  wide.insert(wide.begin() + axis, to / from);
  std::optional<FValue> copies =
      e.broadcastTo(expandDims(e, x, axis, loc), wide, loc);
  llvm::SmallVector<int64_t> shape(x.type.shape.begin(), x.type.shape.end());
  shape[axis] = to;
  return reshapeTo(e, *copies, shape, false, loc);
}

/// The inverse: the first of the `to / from` copies along `axis`.
std::optional<FValue> firstCopy(Emitter &e, const FValue &x, int64_t axis,
                                int64_t from, SMLoc loc) {
  llvm::SmallVector<int64_t> split(x.type.shape.begin(), x.type.shape.end());
  split[axis] = from;
  split.insert(split.begin() + axis, x.type.shape[axis] / from);
  CombineFn first = [](Emitter &, llvm::ArrayRef<FValue> lhs,
                       llvm::ArrayRef<FValue>) {
    return std::optional<std::vector<FValue>>(
        std::vector<FValue>{lhs.begin(), lhs.end()});
  };
  auto kept = emitReduce(e, {reshapeTo(e, x, split, false, loc)}, axis,
                         /*keepDims=*/false, first, loc, "tl.dot");
  if (!kept)
    return std::nullopt;
  return kept->front();
}

std::optional<FValue> dot(Emitter &e, const CallArgs &args);

/// tl.dot of an M x K by a K x N with M or N under 16, on the tensor cores:
/// both padded to 16 by repetition (the accumulator too), the product's
/// repeated rows and columns dropped. (Batched dots need no padding.)
std::optional<FValue> paddedDot(Emitter &e, const CallArgs &args,
                                const FValue &a, const FValue &b,
                                const FValue &acc, const TritonType &type,
                                int64_t m, int64_t n) {
  size_t rank = a.type.shape.size();
  int64_t rowAxis = int64_t(rank) - 2, colAxis = int64_t(rank) - 1;
  FValue pa = m < 16 ? repeatAlong(e, a, rowAxis, 16, args.loc) : a;
  FValue pb = n < 16 ? repeatAlong(e, b, colAxis, 16, args.loc) : b;
  FValue pc = acc;
  if (m < 16)
    pc = repeatAlong(e, pc, rowAxis, 16, args.loc);
  if (n < 16)
    pc = repeatAlong(e, pc, colAxis, 16, args.loc);
  // The same call on the padded blocks: its options, positional or named,
  // as given.
  CallArgs padded = args;
  auto replace = [&](size_t position, StringRef name, const FValue &v) {
    if (padded.args.size() > position) {
      padded.args[position] = v;
      return;
    }
    for (auto &[key, value] : padded.keywords)
      if (key == name) {
        value = v;
        return;
      }
    padded.keywords.push_back({name.str(), v});
    padded.keywordLocs.push_back(args.loc);
  };
  replace(0, "input", pa);
  replace(1, "other", pb);
  replace(2, "acc", pc);
  // a and b come transposed already.
  for (auto &[key, value] : padded.keywords)
    if (key == "trans_a" || key == "trans_b")
      value = FValue::integer(0);
  for (size_t i = 7; i < padded.args.size(); ++i)
    padded.args[i] = FValue::integer(0);
  std::optional<FValue> product = dot(e, padded);
  if (!product)
    return std::nullopt;
  std::optional<FValue> result = product;
  if (m < 16)
    result = firstCopy(e, *result, rowAxis, m, args.loc);
  if (result && n < 16)
    result = firstCopy(e, *result, colAxis, n, args.loc);
  if (result && result->type != type)
    return e.error(args.loc, "internal error: a padded tl.dot gave " +
                                 result->type.str() + ", not " + type.str());
  return result;
}

std::optional<FValue> dot(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {
      "input",           "other",      "acc",
      "input_precision", "allow_tf32", "max_num_imprecise_acc",
      "out_dtype",       "trans_a",    "trans_b"};
  ArgReader r(e, args, "tl.dot", kParams);
  if (!r.isOk())
    return std::nullopt;
  FValue operands[2];
  for (size_t i = 0; i < 2; ++i) {
    const FValue *v = r.get(i);
    if (!v)
      return r.missing(i);
    if (!v->isRuntime() || !v->type.isBlock() || v->type.isPointer)
      return r.bad(i, "a 2-D or 3-D block of numbers");
    operands[i] = *v;
    // trans_a/trans_b (Triton 2.0's form of tl.dot(a, tl.trans(b))): the
    // operand with its last two dimensions swapped.
    if (const FValue *t = r.get(7 + i)) {
      if (!t->isNumber() && t->kind != FValue::Kind::Bool)
        return r.bad(7 + i, "a compile-time bool");
      if (t->intValue) {
        llvm::SmallVector<int32_t> order;
        size_t rank = v->type.shape.size();
        for (size_t d = 0; d < rank; ++d)
          order.push_back(int32_t(d));
        std::swap(order[rank - 2], order[rank - 1]);
        operands[i] = permuteDims(e, *v, order, r.loc(7 + i));
      }
    }
  }
  // fp8e4b15 has no tensor-core instruction: its operands are widened to
  // fp16 (exactly), as upstream does, and multiplied as fp16.
  auto isE4B15 = [](const FValue &v) {
    return v.type.element.getKind() == ScalarKind::F8E4B15;
  };
  if (isE4B15(operands[0]) != isE4B15(operands[1]))
    return e.error(args.loc, "tl.dot needs operands of one dtype, got " +
                                 operands[0].type.element.getLanguageName() +
                                 " and " +
                                 operands[1].type.element.getLanguageName());
  if (isE4B15(operands[0]))
    for (FValue &operand : operands)
      operand = e.castTo(operand, DType(ScalarKind::F16), args.loc);
  const FValue &a = operands[0], &b = operands[1];
  DType ta = a.type.element, tb = b.type.element;
  if (!(ta.isFp8() && tb.isFp8())) {
    static const ScalarKind kAllowed[] = {ScalarKind::I8,  ScalarKind::U8,
                                          ScalarKind::F16, ScalarKind::BF16,
                                          ScalarKind::F32, ScalarKind::F64};
    for (size_t i = 0; i < 2; ++i)
      if (!llvm::is_contained(kAllowed, operands[i].type.element.getKind()))
        return r.bad(i, "a block of int8, float8, float16, bfloat16, float32 "
                        "or float64");
    if (ta != tb)
      return e.error(args.loc, "tl.dot needs operands of one dtype, got " +
                                   ta.getLanguageName() + " and " +
                                   tb.getLanguageName());
  }
  size_t rank = a.type.shape.size();
  if ((rank != 2 && rank != 3) || b.type.shape.size() != rank)
    return e.error(args.loc, "tl.dot needs two 2-D or two 3-D blocks, got "
                             "shapes " +
                                 formatShape(a.type.shape) + " and " +
                                 formatShape(b.type.shape));
  int64_t m = a.type.shape[rank - 2], k = a.type.shape[rank - 1];
  int64_t kb = b.type.shape[rank - 2], n = b.type.shape[rank - 1];
  if (k != kb)
    return e.error(args.loc, "tl.dot: the shapes " + formatShape(a.type.shape) +
                                 " and " + formatShape(b.type.shape) +
                                 " do not multiply (" + std::to_string(k) +
                                 " columns against " + std::to_string(kb) +
                                 " rows)");
  if (rank == 3 && a.type.shape[0] != b.type.shape[0])
    return e.error(args.loc, "tl.dot: batch sizes differ (" +
                                 std::to_string(a.type.shape[0]) + " and " +
                                 std::to_string(b.type.shape[0]) + ")");
  // M or N may be smaller (upstream pads such operands for the tensor
  // cores); K may not.
  if (k < 16)
    return e.error(args.loc,
                   "tl.dot needs K of at least 16, got M=" + std::to_string(m) +
                       ", N=" + std::to_string(n) + ", K=" + std::to_string(k));
  // The result type.
  DType outDType(ScalarKind::F32);
  if (const FValue *o = r.get(6)) {
    if (o->kind != FValue::Kind::DType || o->type.isPointer)
      return r.bad(6, "a dtype such as tl.float32");
    outDType = o->type.element;
  }
  DType resultType;
  if (ta.isInteger()) {
    if (ta.getKind() != ScalarKind::I8)
      return r.bad(0, "int8 (the only integer type tl.dot supports)");
    resultType = DType(ScalarKind::I32);
  } else if (outDType.getKind() == ScalarKind::BF16) {
    return e.error(r.loc(6), "tl.dot does not support out_dtype=bfloat16; use "
                             "float32 and convert with .to(tl.bfloat16)");
  } else if (ta.getKind() == ScalarKind::F32 ||
             ta.getKind() == ScalarKind::BF16) {
    resultType = DType(ScalarKind::F32);
  } else if (ta.getKind() == ScalarKind::F64) {
    resultType = DType(ScalarKind::F64);
  } else {
    if (outDType.getKind() != ScalarKind::F16 &&
        outDType.getKind() != ScalarKind::F32)
      return r.bad(6, "tl.float16 or tl.float32");
    resultType = outDType;
  }
  llvm::SmallVector<int64_t> shape(a.type.shape.begin(),
                                   a.type.shape.end() - 1);
  shape.push_back(n);
  TritonType type{resultType, false, shape};
  // input_precision (allow_tf32 is its deprecated form).
  std::string precision = "tf32";
  if (const FValue *p = r.get(3)) {
    if (p->kind != FValue::Kind::String)
      return r.bad(3, "a string");
    precision = StringRef(p->text).lower();
  } else if (const FValue *t = r.get(4)) {
    precision = t->isNumber() && t->intValue ? "tf32" : "ieee";
  }
  std::optional<kiln::InputPrecision> inputPrecision =
      kiln::symbolizeInputPrecision(precision);
  if (!inputPrecision)
    return r.bad(3, "one of \"tf32\", \"tf32x3\", \"ieee\", \"bf16x3\", "
                    "\"bf16x6\"");
  // Absent: the target's default (upstream decides it by architecture).
  mlir::IntegerAttr maxImprecise;
  if (const FValue *v = r.get(5)) {
    if (!v->isInt() || v->intValue < 0 || v->intValue > INT32_MAX)
      return r.bad(5, "a non-negative compile-time int");
    if (ta.isFp8() && v->intValue > k)
      return e.error(r.loc(5),
                     "max_num_imprecise_acc (" + intText(v->intValue) +
                         ") must be at most K (" + std::to_string(k) + ")");
    maxImprecise = e.getBuilder().getI32IntegerAttr(int32_t(v->intValue));
  }
  // The accumulator.
  std::optional<FValue> acc;
  if (const FValue *c = r.get(2)) {
    if (!c->isRuntime() || c->type.isPointer || c->type != type)
      return r.bad(2,
                   "a block of type " + type.str() + " (the product's type)");
    acc = *c;
  } else {
    acc = e.constant(FValue::integer(0), type, args.loc);
  }
  // Thin operands the tensor cores would take at 16 (upstream pads them):
  // where the product and sum below would hold more than 64 products a
  // thread (8 x 32 x 64 at 4 warps spilled there), a's rows (b's columns)
  // are repeated up to 16, the product taken on the tensor cores, and one
  // copy of each row (column) kept. fp64 and fp32 at ieee precision have
  // no tensor-core instruction: they stay below.
  bool tensorCores = ta.getKind() == ScalarKind::F16 ||
                     ta.getKind() == ScalarKind::BF16 || ta.isFp8() ||
                     ta.getKind() == ScalarKind::I8 ||
                     (ta.getKind() == ScalarKind::F32 &&
                      *inputPrecision != kiln::InputPrecision::IEEE);
  // A batched one stays a kiln.dot: its mma.sync tiles hold the thin
  // shape repeated, in registers (kiln-assign-layouts), where padding
  // would materialize every copy.
  int64_t batch = rank == 3 ? a.type.shape[0] : 1;
  // A thin matrix (neither M nor N 1) with a whole tensor-core step of K
  // goes there at any size, as upstream's: the product and sum below lays
  // its threads along K and sums each of a thread's products across them
  // (GPT-QModel's GGUF GEMM at 8 decode tokens, 8 x 32 x 16 on 2 warps: 320
  // shuffles a step where the padded mma.sync takes 4 instructions).
  // Matrix-vector products keep the product and sum up to the size where it
  // would spill.
  int64_t kStep = ta.isFp8() || ta.getKind() == ScalarKind::I8 ? 32 : 16;
  bool thinMatrix = rank == 2 && m > 1 && n > 1 && k % kStep == 0;
  bool thinOnTensorCores =
      (m < 16 || n < 16) && tensorCores &&
      (thinMatrix || batch * m * n * k > 64 * 32 * int64_t(e.numWarps()));
  // Of 8 rows (a decode step's tokens), the mma.sync tiles hold them twice
  // and the dot stays one, pipelined as any other (upstream's layouts do
  // the same): padding would copy a through registers into a second tile.
  bool halfTileRows = thinMatrix && m == 8 && n >= 16;
  if (thinOnTensorCores && rank == 2 && !halfTileRows)
    return paddedDot(e, args, a, b, *acc, type, m, n);
  auto &builder = e.getBuilder();
  // fp16 accumulation (out_dtype=tl.float16): fp16 operands sum in fp16 on
  // the tensor cores, as upstream's mma does (half the accumulator's
  // registers). fp8 operands, and products too thin for the tensor cores,
  // are summed in fp32 and rounded to fp16 once per tl.dot (within
  // upstream's tolerance, never less accurate).
  bool roundToF16 = resultType.getKind() == ScalarKind::F16 &&
                    !(ta.getKind() == ScalarKind::F16 && m >= 16 && n >= 16);
  TritonType dotType = type;
  if (roundToF16) {
    dotType.element = DType(ScalarKind::F32);
    acc = e.castTo(*acc, dotType.element, args.loc);
  }
  if ((m < 16 || n < 16) && !thinOnTensorCores) {
    // A matrix-vector product or a thin matrix: too small for the tensor
    // cores' tiles, it is a product and a sum along K, in the accumulator's
    // type (fp32 for float operands, i32 for int8; its products exact, its
    // sum in another order than an mma's, and fp32 operands at full
    // precision rather than tf32).
    DType accElem = dotType.element;
    if (m == 1 || n == 1) {
      // A matrix-vector product: the products in the operands' rank (b's
      // column laid along a's rows, or a's row down b's columns) and their
      // sum along K there, in that rank's layout. A product of one rank
      // more takes that rank's default layout, whose threads can all go
      // along K (Mamba-3's backward, a 64 x 64 by a 64 x 1: 160 shuffles a
      // thread).
      llvm::SmallVector<int32_t> swapLast;
      for (size_t d = 0; d < rank; ++d)
        swapLast.push_back(int32_t(d));
      std::swap(swapLast[rank - 2], swapLast[rank - 1]);
      int64_t kAxis = int64_t(rank) - (n == 1 ? 1 : 2);
      FValue x = n == 1 ? a : permuteDims(e, a, swapLast, args.loc);
      FValue y = n == 1 ? permuteDims(e, b, swapLast, args.loc) : b;
      x = e.castTo(x, accElem, args.loc); // [..., M, K] or [..., K, 1]
      y = e.castTo(y, accElem, args.loc); // [..., 1, K] or [..., K, N]
      std::optional<FValue> product = e.binary("*", x, y, args.loc);
      std::optional<FValue> sum =
          product ? callBuiltin(e, "tl.sum", {*product},
                                {{"axis", FValue::integer(kAxis)}}, args.loc)
                  : std::nullopt;
      std::optional<FValue> result =
          sum ? e.binary("+", *acc, expandDims(e, *sum, kAxis, args.loc),
                         args.loc)
              : std::nullopt;
      if (!result)
        return std::nullopt;
      if (roundToF16)
        return e.castTo(*result, type.element, args.loc);
      return result;
    }
    FValue wideA = expandDims(e, e.castTo(a, accElem, args.loc), rank,
                              args.loc); // [..., M, K, 1]
    FValue wideB = expandDims(e, e.castTo(b, accElem, args.loc), rank - 2,
                              args.loc); // [..., 1, K, N]
    std::optional<FValue> product = e.binary("*", wideA, wideB, args.loc);
    std::optional<FValue> sum =
        product ? callBuiltin(e, "tl.sum", {*product},
                              {{"axis", FValue::integer(int64_t(rank) - 1)}},
                              args.loc)
                : std::nullopt;
    std::optional<FValue> result =
        sum ? e.binary("+", *acc, *sum, args.loc) : std::nullopt;
    if (!result)
      return std::nullopt;
    if (roundToF16)
      return e.castTo(*result, type.element, args.loc);
    return result;
  }
  // fp8e5 operands where mma.sync has no fp8 (sm_80 to sm_88): widened to
  // fp16, which holds every e5m2 value exactly, and multiplied there, as
  // upstream's AccelerateMatmul does (the fp32 multiply-add loop they took
  // before spilled 10 KB at 128 x 128 x 128 on sm_80).
  int capability = e.getHostTarget().arch;
  mlir::Value lhs = a.value, rhs = b.value;
  auto widens = [](DType t) {
    return t.getKind() == ScalarKind::F8E5 || t.getKind() == ScalarKind::F16;
  };
  if (capability >= 80 && capability < 89 && widens(ta) &&
      widens(b.type.element) &&
      (ta.getKind() == ScalarKind::F8E5 ||
       b.type.element.getKind() == ScalarKind::F8E5)) {
    lhs = e.castTo(a, DType(ScalarKind::F16), args.loc).value;
    rhs = e.castTo(b, DType(ScalarKind::F16), args.loc).value;
  }
  mlir::Value v = kiln::DotOp::create(
      builder, e.location(args.loc), dotType.toMLIR(e.getContext()), lhs, rhs,
      acc->value,
      kiln::InputPrecisionAttr::get(e.getContext(), *inputPrecision),
      maxImprecise);
  if (roundToF16)
    return e.castTo(FValue::runtime(v, dotType), type.element, args.loc);
  return FValue::runtime(v, type);
}

} // namespace

void kiln::frontend::addMemoryBuiltins(BuiltinTable &table) {
  static const std::pair<const char *, BuiltinFn> kEntries[] = {
      {"tl.load", load},
      {"tl.store", store},
      {"tl.make_block_ptr", makeBlockPtr},
      {"tl.advance", advance},
      {"method.advance", advance},
      {"tl.atomic_add", atomicAdd},
      {"tl.atomic_max", atomicMax},
      {"tl.atomic_min", atomicMin},
      {"tl.atomic_and", atomicAnd},
      {"tl.atomic_or", atomicOr},
      {"tl.atomic_xor", atomicXor},
      {"tl.atomic_xchg", atomicXchg},
      {"tl.atomic_cas", atomicCas},
      {"tl.dot", dot},
  };
  for (const auto &[name, fn] : kEntries) {
    table[name] = fn;
    if (StringRef(name).starts_with("tl.atomic_"))
      table["method." + StringRef(name).drop_front(3).str()] = fn;
  }
}
