#include "gpubench/core/half.hpp"

#include <bit>
#include <cmath>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define GPUBENCH_HAVE_F16C_PATH 1
#else
#define GPUBENCH_HAVE_F16C_PATH 0 // other CPUs (aarch64 hosts) take the portable path
#endif

namespace gpubench {

namespace detail {

float half_to_float_portable(std::uint16_t h) noexcept {
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

std::uint16_t float_to_half_portable(float f) noexcept {
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

bool f16c_available() noexcept {
#if GPUBENCH_HAVE_F16C_PATH
  // F16C from CPUID; "avx" also asks whether the OS saves the 256-bit registers.
  static const bool available = [] {
    unsigned eax = 0;
    unsigned ebx = 0;
    unsigned ecx = 0;
    unsigned edx = 0;
    __builtin_cpu_init();
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0 &&
           __builtin_cpu_supports("avx") != 0;
  }();
  return available;
#else
  return false;
#endif
}

} // namespace detail

#if GPUBENCH_HAVE_F16C_PATH
namespace {

// F16C rounds to nearest even and handles subnormals exactly, as the portable code does; the
// two differ only for NaNs (F16C quiets signalling half NaNs and keeps a float NaN's sign and
// payload), so NaNs, which are rare, take the portable path.
bool is_half_inf_or_nan(std::uint16_t h) noexcept { return (h & 0x7C00U) == 0x7C00U; }

// The F16C intrinsics rather than _Float16 casts (which GCC 12 compiles to the same
// instructions): clang 14, which clang-tidy uses, has no _Float16 on x86.
__attribute__((target("f16c"))) float half_to_float_f16c(std::uint16_t h) noexcept {
  if (is_half_inf_or_nan(h)) return detail::half_to_float_portable(h);
  return _cvtsh_ss(h);
}

__attribute__((target("f16c"))) std::uint16_t float_to_half_f16c(float f) noexcept {
  if ((std::bit_cast<std::uint32_t>(f) & 0x7FFFFFFFU) > 0x7F800000U)
    return static_cast<std::uint16_t>(0x7FFFU);
  const __m128i h = _mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return static_cast<std::uint16_t>(_mm_cvtsi128_si32(h));
}

__attribute__((target("avx,f16c"))) void half_to_float_f16c(const std::uint16_t* in, float* out,
                                                            std::size_t n) noexcept {
  const __m128i exponent = _mm_set1_epi16(0x7C00);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    const __m128i special = _mm_cmpeq_epi16(_mm_and_si128(h, exponent), exponent);
    if (_mm_movemask_epi8(special) != 0)
      for (std::size_t k = i; k < i + 8; ++k)
        if (is_half_inf_or_nan(in[k])) out[k] = detail::half_to_float_portable(in[k]);
  }
  for (; i < n; ++i) out[i] = half_to_float_f16c(in[i]);
}

__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float* in, std::uint16_t* out,
                                                            std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(in + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)) != 0)
      for (std::size_t k = i; k < i + 8; ++k)
        if (in[k] != in[k]) out[k] = static_cast<std::uint16_t>(0x7FFFU);
  }
  for (; i < n; ++i) out[i] = float_to_half_f16c(in[i]);
}

} // namespace
#endif

float half_to_float(std::uint16_t h) noexcept {
#if GPUBENCH_HAVE_F16C_PATH
  if (detail::f16c_available()) return half_to_float_f16c(h);
#endif
  return detail::half_to_float_portable(h);
}

std::uint16_t float_to_half(float f) noexcept {
#if GPUBENCH_HAVE_F16C_PATH
  if (detail::f16c_available()) return float_to_half_f16c(f);
#endif
  return detail::float_to_half_portable(f);
}

void half_to_float(const std::uint16_t* in, float* out, std::size_t n) noexcept {
#if GPUBENCH_HAVE_F16C_PATH
  if (detail::f16c_available()) {
    half_to_float_f16c(in, out, n);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = detail::half_to_float_portable(in[i]);
}

void float_to_half(const float* in, std::uint16_t* out, std::size_t n) noexcept {
#if GPUBENCH_HAVE_F16C_PATH
  if (detail::f16c_available()) {
    float_to_half_f16c(in, out, n);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = detail::float_to_half_portable(in[i]);
}

float e4m3_to_float(std::uint8_t b) noexcept {
  const float sign = (b & 0x80U) != 0 ? -1.0F : 1.0F;
  const unsigned exponent = (b >> 3U) & 0xFU;
  const unsigned mantissa = b & 0x7U;
  if (exponent == 0xFU && mantissa == 0x7U) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9); // subnormal
  return sign *
         std::ldexp(1.0F + static_cast<float>(mantissa) / 8.0F, static_cast<int>(exponent) - 7);
}

std::uint8_t float_to_e4m3(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint8_t>((x >> 24U) & 0x80U);
  const std::uint32_t ax = x & 0x7FFFFFFFU;
  if (ax > 0x7F800000U) return static_cast<std::uint8_t>(sign | 0x7FU); // NaN
  const float a = std::bit_cast<float>(ax);
  if (a >= 448.0F) return static_cast<std::uint8_t>(sign | 0x7EU); // saturate (inf too)
  if (a < 0.015625F) {
    // Below the smallest normal, 2^-6: multiples of 2^-9. a * 2^9 is exact; nearbyint rounds
    // to nearest even; 8 (a rounded up to 2^-6) is the smallest normal's code, 0x08.
    const auto m = static_cast<std::uint32_t>(std::nearbyint(a * 512.0F));
    return static_cast<std::uint8_t>(sign | m);
  }
  // Normal: round the float's 23 mantissa bits to 3 (nearest even, a carry moves the exponent),
  // then re-bias the exponent from 127 to 7. 448 is the largest code left, 0x7E.
  const std::uint32_t rounded = (ax + 0x7FFFFU + ((ax >> 20U) & 1U)) >> 20U;
  const std::uint32_t code = rounded - ((127U - 7U) << 3U);
  return static_cast<std::uint8_t>(sign | (code > 0x7EU ? 0x7EU : code));
}

} // namespace gpubench
