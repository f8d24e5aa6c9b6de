//===- BuiltinsRandom.cpp - tl.rand, randn, randint(4x), philox -----------===//
//
// Philox 4x32 (4x64 for tl.philox on 64-bit counters) expanded into arith
// ops, with the same key, round constants, round count (10 by default),
// seed split and conversions to floats as upstream Triton's random.py, so
// that a seed and an offset give the same numbers bit for bit. tl.philox
// exposes the keyed rounds on four caller-chosen counters; tl.randint4x is
// tl.philox on (offset, 0, 0, 0), a 64-bit offset's halves on (low, high,
// 0, 0).
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace kiln::frontend;

namespace {

struct PhiloxConstants {
  uint64_t keyA, keyB, roundA, roundB;
};
// The golden-ratio key increments and the Philox multipliers.
constexpr PhiloxConstants kPhilox32 = {0x9E3779B9, 0xBB67AE85, 0xD2511F53,
                                       0xCD9E8D57};
constexpr PhiloxConstants kPhilox64 = {0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B,
                                       0xD2E7470EE14C6C93, 0xCA5A826395121157};

/// Emits one value of `v`'s type holding `bits`.
FValue constantLike(Emitter &e, const FValue &v, uint64_t bits, SMLoc loc) {
  return e.constant(FValue::integer(int64_t(bits)), v.type, loc);
}

std::optional<FValue> op(Emitter &e, StringRef o, const FValue &a,
                         const FValue &b, SMLoc loc) {
  return e.binary(o, a, b, loc);
}

/// The high half of the unsigned product (tl.umulhi).
FValue mulhi(Emitter &e, const FValue &a, const FValue &b, SMLoc loc) {
  return emitUMulHi(e, a, b, loc);
}

/// `rounds` Philox rounds on the counters (unsigned, one type and shape) and
/// the key (k0, k1).
std::optional<std::vector<FValue>> philoxRounds(Emitter &e,
                                                std::vector<FValue> c,
                                                FValue k0, FValue k1,
                                                int64_t rounds, SMLoc loc) {
  bool wide = c[0].type.element.getBitWidth() == 64;
  const PhiloxConstants &k = wide ? kPhilox64 : kPhilox32;
  for (int64_t i = 0; i < rounds; ++i) {
    FValue a = constantLike(e, c[0], k.roundA, loc);
    FValue b = constantLike(e, c[2], k.roundB, loc);
    FValue c0 = c[0], c2 = c[2];
    std::optional<FValue> n0 = op(e, "^", mulhi(e, b, c2, loc), c[1], loc);
    n0 = n0 ? op(e, "^", *n0, k0, loc) : std::nullopt;
    std::optional<FValue> n2 = op(e, "^", mulhi(e, a, c0, loc), c[3], loc);
    n2 = n2 ? op(e, "^", *n2, k1, loc) : std::nullopt;
    std::optional<FValue> n1 = op(e, "*", b, c2, loc);
    std::optional<FValue> n3 = op(e, "*", a, c0, loc);
    if (!n0 || !n1 || !n2 || !n3)
      return std::nullopt;
    c = {*n0, *n1, *n2, *n3};
    std::optional<FValue> nk0 =
        op(e, "+", k0, constantLike(e, k0, k.keyA, loc), loc);
    std::optional<FValue> nk1 =
        op(e, "+", k1, constantLike(e, k1, k.keyB, loc), loc);
    if (!nk0 || !nk1)
      return std::nullopt;
    k0 = *nk0;
    k1 = *nk1;
  }
  return c;
}

/// Keys Philox with `seed` (an integer, converted to uint64) and runs
/// `rounds` rounds on the counters (unsigned, one width), as upstream's
/// tl.philox: 32-bit counters take the seed's low and high halves as the
/// key, 64-bit ones the whole seed and zero.
std::optional<std::vector<FValue>> keyedPhilox(Emitter &e, const FValue &seed,
                                               std::vector<FValue> counters,
                                               int64_t rounds, SMLoc loc) {
  DType uint = counters[0].type.element;
  FValue seed64 = e.castTo(seed, DType(ScalarKind::U64), loc);
  FValue k0, k1;
  if (uint.getBitWidth() == 32) {
    TritonType u64{DType(ScalarKind::U64), false, {}};
    std::optional<FValue> hi =
        op(e, ">>", seed64, e.constant(FValue::integer(32), u64, loc), loc);
    hi = hi ? op(e, "&", *hi, e.constant(FValue::integer(0xffffffff), u64, loc),
                 loc)
            : std::nullopt;
    std::optional<FValue> lo = op(
        e, "&", seed64, e.constant(FValue::integer(0xffffffff), u64, loc), loc);
    if (!hi || !lo)
      return std::nullopt;
    k0 = e.castTo(*lo, uint, loc);
    k1 = e.castTo(*hi, uint, loc);
  } else {
    k0 = seed64;
    // Upstream's high key half is a one-element block of zeros.
    k1 = e.constant(FValue::integer(0), TritonType{uint, false, {1}}, loc);
  }
  return philoxRounds(e, std::move(counters), k0, k1, rounds, loc);
}

/// The four random blocks for `seed` and `offset` (tl.randint4x).
std::optional<std::vector<FValue>> randint4x(Emitter &e, const FValue &seedArg,
                                             const FValue &offsetArg,
                                             int64_t rounds, SMLoc loc,
                                             StringRef builtin) {
  std::optional<FValue> seed = e.materialize(seedArg, loc);
  std::optional<FValue> offset =
      seed ? e.materialize(offsetArg, loc) : std::nullopt;
  if (!offset)
    return std::nullopt;
  if (seed->type.isPointer || seed->type.isBlock() ||
      !seed->type.element.isInteger())
    return e.error(loc, "the seed of " + builtin +
                            " must be an integer scalar, got " +
                            seed->describe());
  unsigned bits = offset->type.element.getBitWidth();
  if (offset->type.isPointer || !offset->type.element.isInteger() ||
      (bits != 32 && bits != 64))
    return e.error(loc, "the offset of " + builtin +
                            " must be 32- or 64-bit integers, got " +
                            offset->describe());
  // The counters: (offset, 0, 0, 0) as 32-bit unsigned integers; a 64-bit
  // offset is split into (low half, high half, 0, 0), as upstream's
  // randint4x does, so its numbers are 32-bit Philox's too (4x64 Philox is
  // tl.philox's on 64-bit counters alone).
  DType u32(ScalarKind::U32);
  FValue c0 = e.castTo(*offset, u32, loc);
  FValue zero = constantLike(e, c0, 0, loc);
  FValue c1 = zero;
  if (bits == 64) {
    std::optional<FValue> high =
        e.binary(">>", *offset, FValue::integer(32), loc);
    if (!high)
      return std::nullopt;
    c1 = e.castTo(*high, u32, loc);
  }
  return keyedPhilox(e, *seed, {c0, c1, zero, zero}, rounds, loc);
}

/// Random unsigned integers to floats uniform in [0, 1).
std::optional<FValue> uniformFloat(Emitter &e, const FValue &x, SMLoc loc) {
  bool wide = x.type.element.getBitWidth() == 64;
  std::optional<FValue> s = e.bitcastTo(
      x, TritonType{DType(wide ? ScalarKind::I64 : ScalarKind::I32), false, {}},
      loc);
  if (!s)
    return std::nullopt;
  // where(x < 0, -x - 1, x) * scale, scale = (2^23 - 1) / 2^23 / 2^(N - 1).
  std::optional<FValue> neg = e.binary("<", *s, FValue::integer(0), loc);
  std::optional<FValue> flipped = neg ? e.unary("-", *s, loc) : std::nullopt;
  flipped =
      flipped ? e.binary("-", *flipped, FValue::integer(1), loc) : std::nullopt;
  if (!flipped)
    return std::nullopt;
  mlir::Value sel = mlir::arith::SelectOp::create(
      e.getBuilder(), e.location(loc), neg->value, flipped->value, s->value);
  FValue folded = FValue::runtime(sel, s->type);
  double scale = wide ? 1.0842020432385337e-19 : 4.6566127342e-10;
  return e.binary("*", folded, FValue::floating(scale), loc);
}

/// The first of a Box-Muller pair from two uniform blocks.
std::optional<FValue> boxMuller(Emitter &e, const FValue &u1In,
                                const FValue &u2, bool sine, SMLoc loc) {
  auto &b = e.getBuilder();
  mlir::Location l = e.location(loc);
  FValue lowest = e.constant(FValue::floating(1.0e-7), u1In.type, loc);
  FValue u1 = FValue::runtime(
      mlir::arith::MaxNumFOp::create(b, l, lowest.value, u1In.value),
      u1In.type);
  std::optional<FValue> th =
      e.binary("*", FValue::floating(6.283185307179586), u2, loc);
  FValue logU1 =
      FValue::runtime(mlir::math::LogOp::create(b, l, u1.value), u1.type);
  std::optional<FValue> rr =
      th ? e.binary("*", FValue::floating(-2.0), logU1, loc) : std::nullopt;
  if (!rr)
    return std::nullopt;
  FValue r =
      FValue::runtime(mlir::math::SqrtOp::create(b, l, rr->value), rr->type);
  mlir::Value trig =
      sine ? mlir::Value(mlir::math::SinOp::create(b, l, th->value))
           : mlir::Value(mlir::math::CosOp::create(b, l, th->value));
  return e.binary("*", r, FValue::runtime(trig, th->type), loc);
}

enum class Kind { RandInt, RandInt4x, Rand, Rand4x, RandN, RandN4x };

std::optional<FValue> randomImpl(Emitter &e, const CallArgs &args,
                                 StringRef name, Kind kind) {
  static const StringRef kParams[] = {"seed", "offset", "n_rounds"};
  ArgReader r(e, args, name, kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0) || !r.get(1))
    return r.missing(r.get(0) ? 1 : 0);
  std::optional<int64_t> rounds = r.constInt(2, 10);
  if (!rounds)
    return std::nullopt;
  if (*rounds < 0)
    return r.bad(2, "a non-negative compile-time int");
  auto ints = randint4x(e, *r.get(0), *r.get(1), *rounds, args.loc, name);
  if (!ints)
    return std::nullopt;
  switch (kind) {
  case Kind::RandInt:
    return (*ints)[0];
  case Kind::RandInt4x:
    return FValue::tuple(*ints);
  case Kind::Rand:
    return uniformFloat(e, (*ints)[0], args.loc);
  case Kind::Rand4x:
  case Kind::RandN:
  case Kind::RandN4x: {
    std::vector<FValue> u;
    for (size_t i = 0; i < (kind == Kind::RandN ? 2 : 4); ++i) {
      std::optional<FValue> f = uniformFloat(e, (*ints)[i], args.loc);
      if (!f)
        return std::nullopt;
      u.push_back(*f);
    }
    if (kind == Kind::Rand4x)
      return FValue::tuple(u);
    if (kind == Kind::RandN)
      return boxMuller(e, u[0], u[1], false, args.loc);
    std::vector<FValue> n;
    for (size_t pair = 0; pair < 2; ++pair)
      for (bool sine : {false, true}) {
        std::optional<FValue> v =
            boxMuller(e, u[2 * pair], u[2 * pair + 1], sine, args.loc);
        if (!v)
          return std::nullopt;
        n.push_back(*v);
      }
    return FValue::tuple(n);
  }
  }
  return std::nullopt;
}

/// tl.philox(seed, c0, c1, c2, c3, n_rounds=10): the four Philox outputs
/// for the given counters, as upstream's. The counters' width is c0's (32 or
/// 64 bits, ints or floats, bitcast to unsigned); the others must share it,
/// except python ints, which take it. The results broadcast like the
/// arithmetic of the rounds does.
std::optional<FValue> philoxBuiltin(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"seed", "c0", "c1",
                                      "c2",   "c3", "n_rounds"};
  ArgReader r(e, args, "tl.philox", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 5; ++i)
    if (!r.get(i))
      return r.missing(i);
  std::optional<int64_t> rounds = r.constInt(5, 10);
  if (!rounds)
    return std::nullopt;
  if (*rounds < 0)
    return r.bad(5, "a non-negative compile-time int");
  std::optional<FValue> seed = e.materialize(*r.get(0), r.loc(0));
  if (!seed)
    return std::nullopt;
  if (seed->type.isPointer || seed->type.isBlockPointer() ||
      !seed->type.element.isInteger() || seed->type.element.isBool())
    return r.bad(0, "an integer or a block of integers");
  // A python int in [-2^31, 2^32) is a 32-bit counter, as upstream's
  // to_tensor makes it int32 or uint32.
  auto fits32 = [](int64_t v) {
    return v >= INT32_MIN && v <= int64_t(UINT32_MAX);
  };
  const FValue &first = *r.get(1);
  unsigned bits = 32;
  if (first.isInt())
    bits = fits32(first.intValue) ? 32 : 64;
  else if (first.isRuntime())
    bits = first.type.element.getBitWidth();
  DType uint(bits == 64 ? ScalarKind::U64 : ScalarKind::U32);
  std::vector<FValue> counters;
  for (size_t i = 1; i <= 4; ++i) {
    const FValue &c = *r.get(i);
    if (c.isInt()) {
      if (bits == 32 && !fits32(c.intValue))
        return r.bad(i, "a 32-bit value like c0 (python ints from -2**31 "
                        "to 2**32 - 1)");
      counters.push_back(e.constant(c, TritonType{uint, false, {}}, r.loc(i)));
      continue;
    }
    std::optional<FValue> v = e.materialize(c, r.loc(i));
    if (!v)
      return std::nullopt;
    unsigned width = v->type.element.getBitWidth();
    if (v->type.isPointer || v->type.isBlockPointer() ||
        (width != 32 && width != 64))
      return r.bad(i, "32- or 64-bit integers or floats");
    if (width != bits)
      return r.bad(i, "of c0's width (" + std::to_string(bits) + " bits)");
    std::optional<FValue> u =
        e.bitcastTo(*v, TritonType{uint, false, {}}, r.loc(i));
    if (!u)
      return std::nullopt;
    counters.push_back(*u);
  }
  auto outputs = keyedPhilox(e, *seed, std::move(counters), *rounds, args.loc);
  if (!outputs)
    return std::nullopt;
  return FValue::tuple(*outputs);
}

/// tl.philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=10): the keyed rounds
/// alone on unsigned 32- or 64-bit counters (what tl.philox runs after
/// splitting its seed into the key); python-int keys take the counters'
/// type.
std::optional<FValue> philoxImpl(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"c0", "c1", "c2",      "c3",
                                      "k0", "k1", "n_rounds"};
  ArgReader r(e, args, "tl.philox_impl", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 6; ++i)
    if (!r.get(i))
      return r.missing(i);
  std::optional<int64_t> rounds = r.constInt(6, 10);
  if (!rounds)
    return std::nullopt;
  if (*rounds < 0)
    return r.bad(6, "a non-negative compile-time int");
  std::optional<FValue> first = e.materialize(*r.get(0), r.loc(0));
  if (!first)
    return std::nullopt;
  ScalarKind kind = first->type.element.getKind();
  if (first->type.isPointer || first->type.isBlockPointer() ||
      (kind != ScalarKind::U32 && kind != ScalarKind::U64))
    return r.bad(0, "tl.uint32 or tl.uint64 counters");
  TritonType scalar{first->type.element, false, {}};
  std::vector<FValue> values;
  for (size_t i = 0; i < 6; ++i) {
    const FValue &v = *r.get(i);
    if (v.isInt()) {
      values.push_back(e.constant(v, scalar, r.loc(i)));
      continue;
    }
    if (!v.isRuntime() || v.type.isPointer ||
        v.type.element.getKind() != kind)
      return r.bad(i, "of c0's type (" + first->type.element.getShortName() +
                          ")");
    values.push_back(v);
  }
  auto outputs = philoxRounds(e, {values[0], values[1], values[2], values[3]},
                              values[4], values[5], *rounds, args.loc);
  if (!outputs)
    return std::nullopt;
  return FValue::tuple(*outputs);
}

/// tl.pair_uniform_to_normal(u1, u2): two normal samples from two uniform
/// ones (Box-Muller, as tl.randn).
std::optional<FValue> pairUniformToNormal(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"u1", "u2"};
  ArgReader r(e, args, "tl.pair_uniform_to_normal", kParams);
  if (!r.isOk())
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i)
    if (!r.get(i))
      return r.missing(i);
  std::optional<FValue> u1 = e.materialize(*r.get(0), r.loc(0));
  std::optional<FValue> u2 =
      u1 ? e.materialize(*r.get(1), r.loc(1)) : std::nullopt;
  if (!u2)
    return std::nullopt;
  for (const FValue *u : {&*u1, &*u2})
    if (u->type.isPointer || !u->type.element.isFloat())
      return r.bad(u == &*u1 ? 0 : 1, "floats");
  std::optional<FValue> cosine = boxMuller(e, *u1, *u2, false, args.loc);
  std::optional<FValue> sine =
      cosine ? boxMuller(e, *u1, *u2, true, args.loc) : std::nullopt;
  if (!sine)
    return std::nullopt;
  return FValue::tuple({*cosine, *sine});
}

/// tl.uint_to_uniform_float(x): 32- or 64-bit random integers to floats in
/// [0, 1), the conversion tl.rand uses.
std::optional<FValue> uintToUniformFloat(Emitter &e, const CallArgs &args) {
  static const StringRef kParams[] = {"x"};
  ArgReader r(e, args, "tl.uint_to_uniform_float", kParams);
  if (!r.isOk())
    return std::nullopt;
  if (!r.get(0))
    return r.missing(0);
  std::optional<FValue> x = e.materialize(*r.get(0), r.loc(0));
  if (!x)
    return std::nullopt;
  unsigned bits = x->type.element.getBitWidth();
  if (x->type.isPointer || x->type.isBlockPointer() ||
      !x->type.element.isInteger() || (bits != 32 && bits != 64))
    return r.bad(0, "32- or 64-bit integers");
  return uniformFloat(e, *x, args.loc);
}

#define KILN_RANDOM(fn, name, kind)                                            \
  std::optional<FValue> fn(Emitter &e, const CallArgs &args) {                 \
    return randomImpl(e, args, name, Kind::kind);                              \
  }
KILN_RANDOM(randintBuiltin, "tl.randint", RandInt)
KILN_RANDOM(randint4xBuiltin, "tl.randint4x", RandInt4x)
KILN_RANDOM(randBuiltin, "tl.rand", Rand)
KILN_RANDOM(rand4xBuiltin, "tl.rand4x", Rand4x)
KILN_RANDOM(randnBuiltin, "tl.randn", RandN)
KILN_RANDOM(randn4xBuiltin, "tl.randn4x", RandN4x)
#undef KILN_RANDOM

} // namespace

void kiln::frontend::addRandomBuiltins(BuiltinTable &table) {
  table["tl.randint"] = randintBuiltin;
  table["tl.randint4x"] = randint4xBuiltin;
  table["tl.rand"] = randBuiltin;
  table["tl.rand4x"] = rand4xBuiltin;
  table["tl.randn"] = randnBuiltin;
  table["tl.randn4x"] = randn4xBuiltin;
  table["tl.philox"] = philoxBuiltin;
  table["tl.uint_to_uniform_float"] = uintToUniformFloat;
  table["tl.philox_impl"] = philoxImpl;
  table["tl.pair_uniform_to_normal"] = pairUniformToNormal;
}
