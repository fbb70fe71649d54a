#pragma once
// Host conversions between float and the 16-bit formats (and FP8 E4M3), round to nearest even,
// matching __float2half_rn / __float2bfloat16_rn bit for bit (NaNs become the canonical quiet NaN
// 0x7FFF; half NaNs widen with their payload as it is, signalling ones included). f16 goes through
// the F16C instructions when the CPU has them (every x86-64 CPU since 2012), and through portable
// bit arithmetic otherwise; both give the same bits (tests/unit/half_test.cpp checks every half and
// millions of floats). bf16 is plain bit arithmetic, inline so that loops over it vectorize.
#include <bit>
#include <cstddef>
#include <cstdint>

namespace gpubench {

float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_half(float f) noexcept;

/// Converts n values; eight at a time with F16C.
void half_to_float(const std::uint16_t* in, float* out, std::size_t n) noexcept;
void float_to_half(const float* in, std::uint16_t* out, std::size_t n) noexcept;

inline float bf16_to_float(std::uint16_t h) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16U);
}

inline std::uint16_t float_to_bf16(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>(0x7FFFU);
  const std::uint32_t lsb = (x >> 16U) & 1U;
  return static_cast<std::uint16_t>((x + 0x7FFFU + lsb) >> 16U);
}

/// FP8 E4M3 (the OCP "fn" format CUDA's __nv_fp8_e4m3 is: 4 exponent bits with bias 7, 3
/// mantissa bits, no infinities, S.1111.111 the NaN): its value as a float, exactly.
float e4m3_to_float(std::uint8_t b) noexcept;
/// Round to nearest even; finite values beyond the largest, 448, and infinities saturate to
/// +-448 (as __nv_cvt_float_to_fp8 with __NV_SATFINITE); a NaN becomes 0x7F with its sign.
std::uint8_t float_to_e4m3(float f) noexcept;

namespace detail {
/// The portable conversions: the fallback without F16C, and the tests' oracle.
float half_to_float_portable(std::uint16_t h) noexcept;
std::uint16_t float_to_half_portable(float f) noexcept;
/// True when the F16C paths are used.
bool f16c_available() noexcept;
} // namespace detail

} // namespace gpubench
