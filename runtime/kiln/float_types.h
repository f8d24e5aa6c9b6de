// Host-side storage types for the floating-point formats that Triton kernels
// take and CUDA has no C++ type for: half, bfloat16 and the two float8s.
//
// Each is a trivially copyable wrapper around its bits with the size,
// alignment and bit layout of CUDA's type (`__half`, `__nv_bfloat16`,
// `__nv_fp8_e4m3`, `__nv_fp8_e5m2`), so arrays of them can be copied to and
// from device memory as they are. Conversions from float round to nearest
// even; they are plain host code, meant for preparing inputs and checking
// results rather than for speed.

#ifndef KILN_FLOAT_TYPES_H_
#define KILN_FLOAT_TYPES_H_

#include <cstdint>
#include <type_traits>

// CUDA's and torch's types with the same bits, declared (not defined) so
// that generated launchers accept pointers to them without their headers
// (docs/usage.md, "Element types"). Each is a struct in its own header.
struct __half;
struct __nv_bfloat16;
struct __nv_fp8_e4m3;
struct __nv_fp8_e5m2;
namespace c10 {
struct Half;
struct BFloat16;
struct Float8_e4m3fn;
struct Float8_e5m2;
}  // namespace c10

namespace kiln {

// IEEE 754 binary16: 1 sign bit, 5 exponent bits, 10 mantissa bits; Triton's
// `fp16`. Converting a float rounds to nearest even; values too large become
// infinities.
struct half {
  // Leaves the bits uninitialized, like a float.
  half() = default;
  // The half nearest to `value`.
  explicit half(float value);
  // The exact float value (every half is representable).
  explicit operator float() const;
  // The half with the given bit pattern.
  static constexpr half FromBits(uint16_t bits) { return half(bits, 0); }

  uint16_t bits;

 private:
  constexpr half(uint16_t bits, int /*tag*/) : bits(bits) {}
};

// bfloat16, the upper half of an IEEE binary32: 1 sign bit, 8 exponent bits,
// 7 mantissa bits; Triton's `bf16`. Converting a float rounds to nearest even
// and keeps NaNs NaN.
struct bfloat16 {
  // Leaves the bits uninitialized, like a float.
  bfloat16() = default;
  // The bfloat16 nearest to `value`.
  explicit bfloat16(float value);
  // The exact float value.
  explicit operator float() const;
  // The bfloat16 with the given bit pattern.
  static constexpr bfloat16 FromBits(uint16_t bits) {
    return bfloat16(bits, 0);
  }

  uint16_t bits;

 private:
  constexpr bfloat16(uint16_t bits, int /*tag*/) : bits(bits) {}
};

// OCP float8 E4M3 ("fn": finite, no infinities): 1 sign bit, 4 exponent bits
// (bias 7), 3 mantissa bits; the largest magnitude is 448 and 0x7f/0xff are
// NaN. Triton's `fp8e4nv`. Converting a float rounds to nearest even and, like
// CUDA's `__nv_fp8_e4m3(float)`, saturates to +-448 (infinities too); NaN
// stays NaN.
struct float8_e4m3 {
  // Leaves the bits uninitialized, like a float.
  float8_e4m3() = default;
  // The nearest float8_e4m3 to `value`, saturated to the finite range.
  explicit float8_e4m3(float value);
  // The exact float value.
  explicit operator float() const;
  // The float8_e4m3 with the given bit pattern.
  static constexpr float8_e4m3 FromBits(uint8_t bits) {
    return float8_e4m3(bits, 0);
  }

  uint8_t bits;

 private:
  constexpr float8_e4m3(uint8_t bits, int /*tag*/) : bits(bits) {}
};

// OCP float8 E5M2: 1 sign bit, 5 exponent bits (bias 15), 2 mantissa bits,
// with infinities and NaNs like IEEE; the largest finite magnitude is 57344.
// Triton's `fp8e5`. Converting a float rounds to nearest even and, like CUDA's
// `__nv_fp8_e5m2(float)`, saturates to +-57344 (infinities too); NaN stays
// NaN.
struct float8_e5m2 {
  // Leaves the bits uninitialized, like a float.
  float8_e5m2() = default;
  // The nearest float8_e5m2 to `value`, saturated to the finite range.
  explicit float8_e5m2(float value);
  // The exact float value.
  explicit operator float() const;
  // The float8_e5m2 with the given bit pattern.
  static constexpr float8_e5m2 FromBits(uint8_t bits) {
    return float8_e5m2(bits, 0);
  }

  uint8_t bits;

 private:
  constexpr float8_e5m2(uint8_t bits, int /*tag*/) : bits(bits) {}
};

static_assert(sizeof(half) == 2 && alignof(half) == 2, "layout of __half");
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2,
              "layout of __nv_bfloat16");
static_assert(sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1,
              "layout of __nv_fp8_*");
static_assert(std::is_trivially_copyable<half>::value &&
                  std::is_trivially_copyable<bfloat16>::value &&
                  std::is_trivially_copyable<float8_e4m3>::value &&
                  std::is_trivially_copyable<float8_e5m2>::value,
              "device storage types must be trivially copyable");

}  // namespace kiln

#endif  // KILN_FLOAT_TYPES_H_
