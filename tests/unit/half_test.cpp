#include "gpubench/half.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>

using namespace gpubench;

TEST_CASE("f16 conversion round-trips every finite half exactly", "[half]") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7C00U) == 0x7C00U) continue; // inf and NaN
    REQUIRE(float_to_half(half_to_float(bits)) == bits);
  }
}

TEST_CASE("f16 rounds to nearest even, overflows to inf, keeps subnormals", "[half]") {
  CHECK(half_to_float(float_to_half(1.0F)) == 1.0F);
  CHECK(float_to_half(65504.0F) == 0x7BFF);
  CHECK(float_to_half(65520.0F) == 0x7C00); // halfway to 65536 rounds to even: infinity
  CHECK(float_to_half(65519.0F) == 0x7BFF);
  CHECK(float_to_half(1.0F + std::ldexp(1.0F, -11)) == 0x3C00);     // tie to even (down)
  CHECK(float_to_half(1.0F + 3 * std::ldexp(1.0F, -11)) == 0x3C02); // tie to even (up)
  CHECK(float_to_half(std::ldexp(1.0F, -24)) == 0x0001);
  CHECK(float_to_half(std::ldexp(1.0F, -25)) == 0x0000); // tie to even: zero
  CHECK(float_to_half(-0.0F) == 0x8000);
  CHECK(float_to_half(NAN) == 0x7FFF);
}

TEST_CASE("bf16 rounds to nearest even", "[half]") {
  CHECK(float_to_bf16(1.0F) == 0x3F80);
  CHECK(bf16_to_float(0x3F80) == 1.0F);
  CHECK(float_to_bf16(std::bit_cast<float>(0x3F808000U)) == 0x3F80); // tie, even stays
  CHECK(float_to_bf16(std::bit_cast<float>(0x3F818000U)) == 0x3F82); // tie, odd rounds up
  CHECK(float_to_bf16(std::bit_cast<float>(0x3F808001U)) == 0x3F81);
  CHECK(float_to_bf16(NAN) == 0x7FFF);
}
