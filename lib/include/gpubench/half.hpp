#pragma once
// Host conversions between float and the 16-bit formats, round to nearest even, matching
// __float2half_rn / __float2bfloat16_rn bit for bit (NaNs become the canonical quiet NaN).
#include <cstdint>

namespace gpubench {

float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_half(float f) noexcept;
float bf16_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_bf16(float f) noexcept;

} // namespace gpubench
