#include "kiln/float_types.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln {
namespace {

// A binary floating-point format narrower than float, described by its field
// widths and how it spends the top exponent code.
struct Format {
  int exponent_bits;
  int mantissa_bits;
  // IEEE-like: the all-ones exponent holds infinity and NaNs. Otherwise (E4M3)
  // it holds ordinary numbers and only the all-ones pattern is NaN.
  bool has_infinity;
  // Out-of-range values become the largest finite value instead of infinity.
  bool saturate;
};

constexpr Format kHalf{5, 10, true, false};
constexpr Format kE4M3{4, 3, false, true};
constexpr Format kE5M2{5, 2, true, true};

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

constexpr int Bias(const Format& f) { return (1 << (f.exponent_bits - 1)) - 1; }

// The bits of the largest finite magnitude.
constexpr uint32_t MaxFinite(const Format& f) {
  const uint32_t all_ones = (1u << (f.exponent_bits + f.mantissa_bits)) - 1;
  // IEEE-like formats lose the top exponent code; E4M3 only the NaN pattern.
  return f.has_infinity ? all_ones - (1u << f.mantissa_bits) : all_ones - 1;
}

// The bits of +infinity; IEEE-like formats only.
constexpr uint32_t Infinity(const Format& f) { return MaxFinite(f) + 1; }

constexpr uint32_t QuietNan(const Format& f) {
  return f.has_infinity ? Infinity(f) | (1u << (f.mantissa_bits - 1))
                        : (1u << (f.exponent_bits + f.mantissa_bits)) - 1;
}

// What values beyond the finite range become.
constexpr uint32_t Overflow(const Format& f) {
  return f.saturate ? MaxFinite(f) : Infinity(f);
}

// Rounds `value` to nearest even in format `f` and returns the bits.
uint32_t Encode(float value, const Format& f) {
  const uint32_t bits = FloatBits(value);
  const uint32_t sign = (bits >> 31) << (f.exponent_bits + f.mantissa_bits);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | QuietNan(f);
  if (magnitude == 0x7f800000u) return sign | Overflow(f);
  const int float_exponent = static_cast<int>(magnitude >> 23);
  // Float subnormals are far below the smallest subnormal of every format
  // here, so they round to zero.
  if (float_exponent == 0) return sign;

  // value = significand * 2^(exponent - 23), significand with its leading 1.
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const int exponent = float_exponent - 127;
  const int min_exponent = 1 - Bias(f);
  // Drop the bits below the format's last mantissa bit; subnormal results
  // keep fewer bits.
  int shift = 23 - f.mantissa_bits;
  if (exponent < min_exponent) shift += min_exponent - exponent;
  uint32_t rounded;
  if (shift > 25) {
    rounded = 0;  // below half the smallest subnormal
  } else {
    const uint32_t kept = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    rounded =
        kept + ((rest > halfway || (rest == halfway && (kept & 1))) ? 1 : 0);
  }
  // For normal results `rounded` carries the implicit leading 1 at bit
  // `mantissa_bits`, so adding it to (biased exponent - 1) << mantissa_bits
  // gives the encoding; a carry out of the mantissa bumps the exponent, as it
  // should. Subnormal results are the rounded value itself.
  uint32_t result =
      exponent < min_exponent
          ? rounded
          : (static_cast<uint32_t>(exponent + Bias(f) - 1) << f.mantissa_bits) +
                rounded;
  if (result > MaxFinite(f)) result = Overflow(f);
  return sign | result;
}

float Decode(uint32_t bits, const Format& f) {
  const int width = f.exponent_bits + f.mantissa_bits;
  const bool negative = (bits >> width) & 1;
  const uint32_t magnitude = bits & ((1u << width) - 1);
  const uint32_t exponent_field = magnitude >> f.mantissa_bits;
  const uint32_t mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
  float value;
  if (magnitude > MaxFinite(f)) {
    const bool infinity = f.has_infinity && mantissa == 0;
    value = infinity ? INFINITY : NAN;
  } else if (exponent_field == 0) {
    value =
        std::ldexp(static_cast<float>(mantissa), 1 - Bias(f) - f.mantissa_bits);
  } else {
    value = std::ldexp(
        static_cast<float>(mantissa | (1u << f.mantissa_bits)),
        static_cast<int>(exponent_field) - Bias(f) - f.mantissa_bits);
  }
  return negative ? -value : value;
}

}  // namespace

half::half(float value) : bits(static_cast<uint16_t>(Encode(value, kHalf))) {}

half::operator float() const { return Decode(bits, kHalf); }

bfloat16::bfloat16(float value) {
  const uint32_t b = FloatBits(value);
  if ((b & 0x7fffffffu) > 0x7f800000u) {
    bits = static_cast<uint16_t>((b >> 16) | 0x40);  // keep it a quiet NaN
    return;
  }
  // bfloat16 shares float's exponent range, so rounding the low 16 bits away
  // (to nearest even) is the whole conversion, subnormals and overflow to
  // infinity included.
  const uint32_t rounding = 0x7fffu + ((b >> 16) & 1);
  bits = static_cast<uint16_t>((b + rounding) >> 16);
}

bfloat16::operator float() const {
  return BitsToFloat(static_cast<uint32_t>(bits) << 16);
}

float8_e4m3::float8_e4m3(float value)
    : bits(static_cast<uint8_t>(Encode(value, kE4M3))) {}

float8_e4m3::operator float() const { return Decode(bits, kE4M3); }

float8_e5m2::float8_e5m2(float value)
    : bits(static_cast<uint8_t>(Encode(value, kE5M2))) {}

float8_e5m2::operator float() const { return Decode(bits, kE5M2); }

}  // namespace kiln
