#include "kiln/float_types.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace kiln {
namespace {

template <typename T> uint32_t Bits(float value) { return T(value).bits; }

template <typename T> float Value(uint32_t bits) {
  return static_cast<float>(T::FromBits(static_cast<decltype(T::bits)>(bits)));
}

// Checks that T(value) is the representable value nearest to `value`, ties to
// the even encoding, by comparing with its neighbours. `value` must lie within
// the finite range of T.
template <typename T> void ExpectNearest(float value) {
  const uint32_t bits = Bits<T>(value);
  const double chosen = Value<T>(bits);
  ASSERT_FALSE(std::isnan(chosen)) << value;
  const double error = std::fabs(chosen - static_cast<double>(value));
  // Neighbours in magnitude: the encoding +-1 keeps the sign bit.
  const uint32_t magnitude_mask = (sizeof(T::bits) == 1 ? 0x7fu : 0x7fffu);
  for (int step : {-1, 1}) {
    const uint32_t magnitude = bits & magnitude_mask;
    if ((step < 0 && magnitude == 0) ||
        (step > 0 && magnitude == magnitude_mask))
      continue;
    const double other = Value<T>(bits + step);
    if (std::isnan(other) || std::isinf(other))
      continue;
    const double other_error = std::fabs(other - static_cast<double>(value));
    EXPECT_LE(error, other_error) << "value " << value << " bits " << bits;
    if (error == other_error && error != 0) {
      EXPECT_EQ(bits & 1, 0u) << "tie not to even: " << value;
    }
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(Bits<half>(0.0f), 0x0000u);
  EXPECT_EQ(Bits<half>(-0.0f), 0x8000u);
  EXPECT_EQ(Bits<half>(1.0f), 0x3c00u);
  EXPECT_EQ(Bits<half>(-2.0f), 0xc000u);
  EXPECT_EQ(Bits<half>(0.5f), 0x3800u);
  EXPECT_EQ(Bits<half>(65504.0f), 0x7bffu); // largest finite
  EXPECT_EQ(Bits<half>(65519.0f), 0x7bffu); // rounds down
  EXPECT_EQ(Bits<half>(65520.0f), 0x7c00u); // rounds to infinity
  EXPECT_EQ(Bits<half>(1e10f), 0x7c00u);
  EXPECT_EQ(Bits<half>(-INFINITY), 0xfc00u);
  EXPECT_EQ(Bits<half>(std::ldexp(1.0f, -14)), 0x0400u); // smallest normal
  EXPECT_EQ(Bits<half>(std::ldexp(1.0f, -24)), 0x0001u); // smallest subnormal
  EXPECT_EQ(Bits<half>(std::ldexp(1.0f, -25)), 0x0000u); // tie to even: 0
  EXPECT_EQ(Bits<half>(std::ldexp(1.5f, -25)), 0x0001u);
  EXPECT_EQ(Bits<half>(std::ldexp(3.0f, -25)), 0x0002u); // tie to even: 2
  EXPECT_EQ(Bits<half>(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(Bits<half>(1.0f + std::ldexp(1.0f, -11)), 0x3c00u); // tie, even
  EXPECT_EQ(Bits<half>(1.0f + std::ldexp(3.0f, -11)), 0x3c02u); // tie, even
  const uint32_t nan = Bits<half>(NAN);
  EXPECT_EQ(nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan & 0x03ffu, 0u);
}

TEST(Half, ToFloat) {
  EXPECT_EQ(Value<half>(0x3c00), 1.0f);
  EXPECT_EQ(Value<half>(0x3555), 0.333251953125f);
  EXPECT_EQ(Value<half>(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(Value<half>(0x7bff), 65504.0f);
  EXPECT_EQ(Value<half>(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(Value<half>(0x7e00)));
  EXPECT_TRUE(std::signbit(Value<half>(0x8000)));
}

TEST(Half, EveryValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = Value<half>(bits);
    if (std::isnan(value))
      continue;
    EXPECT_EQ(Bits<half>(value), bits) << bits;
  }
}

TEST(Half, RoundsToNearestEven) {
  std::mt19937 random(1);
  std::uniform_real_distribution<float> exponent(-26.0f, 15.9f);
  for (int i = 0; i < 200000; ++i) {
    const float value = std::exp2(exponent(random)) * (i % 2 ? -1.0f : 1.0f);
    if (std::fabs(value) > 65504.0f)
      continue;
    ExpectNearest<half>(value);
  }
}

#if defined(__FLT16_MANT_DIG__)
// Where the compiler has _Float16, its conversion is the reference.
TEST(Half, MatchesCompilerFloat16) {
  std::mt19937 random(2);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 1000000; ++i) {
    uint32_t b = any_bits(random);
    float value;
    std::memcpy(&value, &b, sizeof(value));
    if (std::isnan(value))
      continue;
    const _Float16 reference = static_cast<_Float16>(value);
    uint16_t reference_bits;
    std::memcpy(&reference_bits, &reference, sizeof(reference_bits));
    ASSERT_EQ(Bits<half>(value), reference_bits) << value;
  }
}
#endif

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(Bits<bfloat16>(1.0f), 0x3f80u);
  EXPECT_EQ(Bits<bfloat16>(-2.0f), 0xc000u);
  EXPECT_EQ(Bits<bfloat16>(1.0f + std::ldexp(1.0f, -8)), 0x3f80u); // tie
  EXPECT_EQ(Bits<bfloat16>(1.0f + std::ldexp(3.0f, -8)), 0x3f82u); // tie
  EXPECT_EQ(Bits<bfloat16>(1.0f + std::ldexp(1.0f, -7)), 0x3f81u);
  EXPECT_EQ(Bits<bfloat16>(INFINITY), 0x7f80u);
  EXPECT_EQ(Bits<bfloat16>(std::numeric_limits<float>::max()), 0x7f80u);
  const uint32_t nan = Bits<bfloat16>(NAN);
  EXPECT_EQ(nan & 0x7f80u, 0x7f80u);
  EXPECT_NE(nan & 0x007fu, 0u);
  // A NaN whose payload sits in the discarded bits stays a NaN.
  uint32_t low_payload_nan = 0x7f800001u;
  float value;
  std::memcpy(&value, &low_payload_nan, sizeof(value));
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(value))));
}

TEST(BFloat16, EveryValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = Value<bfloat16>(bits);
    if (std::isnan(value))
      continue;
    EXPECT_EQ(Bits<bfloat16>(value), bits) << bits;
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  std::mt19937 random(3);
  std::uniform_real_distribution<float> exponent(-130.0f, 127.0f);
  for (int i = 0; i < 200000; ++i) {
    ExpectNearest<bfloat16>(std::exp2(exponent(random)));
  }
}

TEST(Float8E4M3, KnownValues) {
  EXPECT_EQ(Bits<float8_e4m3>(1.0f), 0x38u);
  EXPECT_EQ(Bits<float8_e4m3>(-1.0f), 0xb8u);
  EXPECT_EQ(Bits<float8_e4m3>(448.0f), 0x7eu);  // largest finite
  EXPECT_EQ(Bits<float8_e4m3>(1000.0f), 0x7eu); // saturates
  EXPECT_EQ(Bits<float8_e4m3>(INFINITY), 0x7eu);
  EXPECT_EQ(Bits<float8_e4m3>(-INFINITY), 0xfeu);
  EXPECT_EQ(Bits<float8_e4m3>(NAN), 0x7fu);
  EXPECT_EQ(Bits<float8_e4m3>(std::ldexp(1.0f, -9)), 0x01u);  // smallest
  EXPECT_EQ(Bits<float8_e4m3>(std::ldexp(1.0f, -10)), 0x00u); // tie to 0
  EXPECT_EQ(Value<float8_e4m3>(0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(Value<float8_e4m3>(0x7f)));
  EXPECT_TRUE(std::isnan(Value<float8_e4m3>(0xff)));
  EXPECT_EQ(Value<float8_e4m3>(0x78), 256.0f); // no infinity encoding
}

TEST(Float8E4M3, EveryValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xff; ++bits) {
    const float value = Value<float8_e4m3>(bits);
    if (std::isnan(value))
      continue;
    EXPECT_EQ(Bits<float8_e4m3>(value), bits) << bits;
  }
}

TEST(Float8E4M3, RoundsToNearestEven) {
  std::mt19937 random(4);
  std::uniform_real_distribution<float> value(-448.0f, 448.0f);
  std::uniform_real_distribution<float> small(-0.05f, 0.05f);
  for (int i = 0; i < 100000; ++i) {
    ExpectNearest<float8_e4m3>(value(random));
    ExpectNearest<float8_e4m3>(small(random));
  }
}

TEST(Float8E5M2, KnownValues) {
  EXPECT_EQ(Bits<float8_e5m2>(1.0f), 0x3cu);
  EXPECT_EQ(Bits<float8_e5m2>(57344.0f), 0x7bu); // largest finite
  EXPECT_EQ(Bits<float8_e5m2>(1e6f), 0x7bu);     // saturates
  EXPECT_EQ(Bits<float8_e5m2>(-INFINITY), 0xfbu);
  EXPECT_EQ(Bits<float8_e5m2>(std::ldexp(1.0f, -16)), 0x01u); // smallest
  const uint32_t nan = Bits<float8_e5m2>(NAN);
  EXPECT_TRUE(std::isnan(Value<float8_e5m2>(nan)));
  EXPECT_EQ(Value<float8_e5m2>(0x7c), INFINITY);
  EXPECT_TRUE(std::isnan(Value<float8_e5m2>(0x7d)));
}

TEST(Float8E5M2, EveryFiniteValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xff; ++bits) {
    const float value = Value<float8_e5m2>(bits);
    if (!std::isfinite(value))
      continue;
    EXPECT_EQ(Bits<float8_e5m2>(value), bits) << bits;
  }
}

TEST(Float8E5M2, RoundsToNearestEven) {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> exponent(-18.0f, 15.8f);
  for (int i = 0; i < 100000; ++i) {
    ExpectNearest<float8_e5m2>(std::exp2(exponent(random)) *
                               (i % 2 ? -1.0f : 1.0f));
  }
}

TEST(FloatTypes, LayoutMatchesCuda) {
  static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "");
  static_assert(sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1, "");
  half values[4] = {half(1.0f), half(2.0f), half(3.0f), half(4.0f)};
  uint16_t raw[4];
  std::memcpy(raw, values, sizeof(raw));
  EXPECT_EQ(raw[0], 0x3c00u);
  EXPECT_EQ(raw[3], 0x4400u);
}

} // namespace
} // namespace kiln
