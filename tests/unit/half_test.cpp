#include "gpubench/core/half.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

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

// The F16C conversions (used when the CPU has F16C) against the portable bit arithmetic that was
// the only implementation before: same bits for every half and for floats of every kind.
TEST_CASE("f16 widening gives the portable conversion's bits for all 65536 halves", "[half]") {
  INFO("F16C used: " << detail::f16c_available());
  std::vector<std::uint16_t> all(0x10000);
  for (std::uint32_t h = 0; h < 0x10000; ++h) all[h] = static_cast<std::uint16_t>(h);
  std::vector<float> bulk(all.size());
  half_to_float(all.data(), bulk.data(), all.size());
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    INFO("half 0x" << std::hex << h);
    const auto expected = std::bit_cast<std::uint32_t>(detail::half_to_float_portable(all[h]));
    REQUIRE(std::bit_cast<std::uint32_t>(half_to_float(all[h])) == expected);
    REQUIRE(std::bit_cast<std::uint32_t>(bulk[h]) == expected);
  }
}

TEST_CASE("f16 narrowing gives the portable conversion's bits for random and edge floats",
          "[half]") {
  const auto seed = std::random_device{}();
  INFO("seed " << seed << ", F16C used: " << detail::f16c_available());
  std::mt19937_64 rng(seed);
  std::vector<float> floats;
  // Random bit patterns cover every exponent (NaNs and infinities included); values near the
  // half range cover rounding, ties, subnormal results and overflow.
  for (int i = 0; i < 4'000'000; ++i)
    floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  std::uniform_real_distribution<float> near(-70000.0F, 70000.0F);
  for (int i = 0; i < 2'000'000; ++i)
    floats.push_back(near(rng) * std::ldexp(1.0F, -static_cast<int>(rng() % 40)));
  // Every float whose nearest halves are a tie apart, around 1 and in the subnormal range.
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {
    const float lo = detail::half_to_float_portable(static_cast<std::uint16_t>(h));
    const float hi = detail::half_to_float_portable(static_cast<std::uint16_t>(h + 1));
    floats.push_back(lo + (hi - lo) / 2);
    floats.push_back(std::nextafter(lo + (hi - lo) / 2, 0.0F));
    floats.push_back(-lo);
  }
  floats.push_back(std::bit_cast<float>(0xFFC00001U)); // negative NaN with a payload
  floats.push_back(std::bit_cast<float>(0x7F800001U)); // signalling NaN
  floats.push_back(65520.0F);
  floats.push_back(-std::numeric_limits<float>::infinity());
  floats.push_back(std::numeric_limits<float>::denorm_min());
  std::vector<std::uint16_t> bulk(floats.size());
  float_to_half(floats.data(), bulk.data(), floats.size());
  for (std::size_t i = 0; i < floats.size(); ++i) {
    INFO("float 0x" << std::hex << std::bit_cast<std::uint32_t>(floats[i]));
    const auto expected = detail::float_to_half_portable(floats[i]);
    REQUIRE(float_to_half(floats[i]) == expected);
    REQUIRE(bulk[i] == expected);
  }
}

TEST_CASE("bulk f16 conversions handle every length and NaNs at every position", "[half]") {
  for (std::size_t n = 0; n < 40; ++n) {
    for (std::size_t nan_at = 0; nan_at <= n; ++nan_at) {
      std::vector<float> f(n);
      for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(i) * 0.37F - 3.0F;
      if (nan_at < n) f[nan_at] = -std::numeric_limits<float>::quiet_NaN();
      std::vector<std::uint16_t> h(n + 1, 0xABCD);
      float_to_half(f.data(), h.data(), n);
      CHECK(h[n] == 0xABCD); // nothing written past the end
      for (std::size_t i = 0; i < n; ++i) REQUIRE(h[i] == detail::float_to_half_portable(f[i]));
      if (nan_at < n) h[nan_at] = 0x7D01; // a signalling half NaN
      std::vector<float> back(n + 1, 7.0F);
      half_to_float(h.data(), back.data(), n);
      CHECK(back[n] == 7.0F);
      for (std::size_t i = 0; i < n; ++i)
        REQUIRE(std::bit_cast<std::uint32_t>(back[i]) ==
                std::bit_cast<std::uint32_t>(detail::half_to_float_portable(h[i])));
    }
  }
}

TEST_CASE("FP8 E4M3: every code decodes to its value and encodes back", "[half][fp8]") {
  // Values by the format's definition: 0.EEEE.MMM = 2^(E-7) (1 + M/8), E = 0: M 2^-9.
  CHECK(e4m3_to_float(0x00) == 0.0F);
  CHECK(e4m3_to_float(0x01) == std::ldexp(1.0F, -9)); // smallest subnormal
  CHECK(e4m3_to_float(0x08) == std::ldexp(1.0F, -6)); // smallest normal
  CHECK(e4m3_to_float(0x38) == 1.0F);
  CHECK(e4m3_to_float(0x3C) == 1.5F);
  CHECK(e4m3_to_float(0x7E) == 448.0F); // largest
  CHECK(e4m3_to_float(0xBC) == -1.5F);
  CHECK(std::isnan(e4m3_to_float(0x7F)));
  CHECK(std::isnan(e4m3_to_float(0xFF)));
  CHECK(std::signbit(e4m3_to_float(0x80)));
  float previous = -1.0F;
  for (unsigned c = 0; c < 0x7F; ++c) { // positive codes increase with their value
    const float v = e4m3_to_float(static_cast<std::uint8_t>(c));
    REQUIRE(v > previous);
    previous = v;
  }
  for (unsigned c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    if ((c & 0x7FU) == 0x7FU) continue; // NaN
    INFO("code 0x" << std::hex << c);
    REQUIRE(float_to_e4m3(e4m3_to_float(code)) == code);
  }
}

TEST_CASE("FP8 E4M3: rounding to nearest even, saturation, NaN", "[half][fp8]") {
  // Between each pair of neighbouring positive codes: just below the midpoint rounds down, just
  // above rounds up, the midpoint itself to the even code.
  for (unsigned c = 0; c + 1 < 0x7F; ++c) {
    const float lo = e4m3_to_float(static_cast<std::uint8_t>(c));
    const float hi = e4m3_to_float(static_cast<std::uint8_t>(c + 1));
    const float mid = (lo + hi) / 2; // exact: both have 4 significant bits at most
    INFO("codes 0x" << std::hex << c << " and 0x" << c + 1);
    REQUIRE(float_to_e4m3(std::nextafter(mid, lo)) == c);
    REQUIRE(float_to_e4m3(std::nextafter(mid, hi)) == c + 1);
    REQUIRE(float_to_e4m3(mid) == ((c & 1U) == 0 ? c : c + 1));
    REQUIRE(float_to_e4m3(-std::nextafter(mid, hi)) == (0x80U | (c + 1)));
  }
  CHECK(float_to_e4m3(1e-30F) == 0x00);
  CHECK(float_to_e4m3(std::ldexp(1.0F, -10)) == 0x00); // half the smallest subnormal: to even 0
  CHECK(float_to_e4m3(464.0F) == 0x7E);
  CHECK(float_to_e4m3(1e9F) == 0x7E);
  CHECK(float_to_e4m3(-std::numeric_limits<float>::infinity()) == 0xFE);
  CHECK(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
  CHECK(float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()) == 0xFF);
}
