#include "gpubench/half.hpp"

#include <bit>
#include <cstring>

namespace gpubench {

float half_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16U;
  const std::uint32_t exp = (h >> 10U) & 0x1FU;
  std::uint32_t mant = h & 0x3FFU;
  std::uint32_t bits = 0;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1U;
      } while ((mant & 0x400U) == 0);
      bits = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23U) | ((mant & 0x3FFU) << 13U);
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000U | (mant << 13U);
  } else {
    bits = sign | ((exp + 127 - 15) << 23U) | (mant << 13U);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16U) & 0x8000U);
  const std::uint32_t abs = x & 0x7FFFFFFFU;
  if (abs > 0x7F800000U) return static_cast<std::uint16_t>(0x7FFFU);         // canonical NaN
  if (abs >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U); // overflow to inf
  if (abs < 0x38800000U) {              // result is subnormal or zero
    if (abs < 0x33000000U) return sign; // below half of the smallest subnormal
    const std::uint32_t mant = (abs & 0x7FFFFFU) | 0x800000U;
    const int shift = 126 - static_cast<int>(abs >> 23U); // 14..24
    const std::uint32_t q = mant >> static_cast<unsigned>(shift);
    const std::uint32_t rem = mant & ((1U << static_cast<unsigned>(shift)) - 1U);
    const std::uint32_t halfway = 1U << static_cast<unsigned>(shift - 1);
    const std::uint32_t r = q + ((rem > halfway || (rem == halfway && (q & 1U) != 0)) ? 1U : 0U);
    return static_cast<std::uint16_t>(sign | r);
  }
  const std::uint32_t rebased = abs - 0x38000000U; // exponent 127 -> 15
  const std::uint32_t q = rebased >> 13U;
  const std::uint32_t rem = rebased & 0x1FFFU;
  const std::uint32_t r = q + ((rem > 0x1000U || (rem == 0x1000U && (q & 1U) != 0)) ? 1U : 0U);
  return static_cast<std::uint16_t>(sign | r);
}

float bf16_to_float(std::uint16_t h) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16U);
}

std::uint16_t float_to_bf16(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>(0x7FFFU);
  const std::uint32_t lsb = (x >> 16U) & 1U;
  return static_cast<std::uint16_t>((x + 0x7FFFU + lsb) >> 16U);
}

} // namespace gpubench
