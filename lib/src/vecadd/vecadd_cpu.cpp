#include "gpubench/vecadd/vecadd_cpu.hpp"

#include "gpubench/core/half.hpp"
#include "gpubench/core/random.hpp"
#include "gpubench/engine/check_elements.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace gpubench {

namespace {

template <typename T>
void add_range(const T* __restrict a, const T* __restrict b, T* __restrict c, std::size_t begin,
               std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) c[i] = a[i] + b[i];
}

/// Half types a block at a time: widened to float (F16C for f16), added, rounded back once.
template <typename Widen, typename Narrow>
void add_range_16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* c,
                  std::size_t begin, std::size_t end, Widen widen, Narrow narrow) {
  constexpr std::size_t block = 1024;
  std::array<float, block> x{};
  std::array<float, block> y{};
  for (std::size_t i = begin; i < end; i += block) {
    const std::size_t len = std::min(block, end - i);
    widen(a + i, x.data(), len);
    widen(b + i, y.data(), len);
    for (std::size_t k = 0; k < len; ++k) x[k] += y[k];
    narrow(x.data(), c + i, len);
  }
}

void widen_half(const std::uint16_t* in, float* out, std::size_t n) { half_to_float(in, out, n); }
void narrow_half(const float* in, std::uint16_t* out, std::size_t n) { float_to_half(in, out, n); }
void widen_bf16(const std::uint16_t* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(in[i]);
}
void narrow_bf16(const float* in, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_bf16(in[i]);
}

} // namespace

void fill_random(dtype type, void* out, std::size_t n, std::uint64_t seed, std::uint64_t stream,
                 thread_pool& pool) {
  const random_sequence r(seed, stream);
  // The key computed once and one loop per type: the inner loop is one splitmix64 and a
  // conversion, with no branch on the type.
  const auto fill = [&](auto* p, auto value) {
    pool.parallel_for(n, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) p[i] = value(i);
    });
  };
  const auto u = [r](std::size_t i) { return r.unit_float(i) * 2.0F - 1.0F; };
  switch (type) {
  case dtype::f32: fill(static_cast<float*>(out), u); break;
  case dtype::f64:
    fill(static_cast<double*>(out), [r](std::size_t i) { return r.unit_double(i) * 2.0 - 1.0; });
    break;
  case dtype::f16:
    fill(static_cast<std::uint16_t*>(out), [u](std::size_t i) { return float_to_half(u(i)); });
    break;
  case dtype::bf16:
    fill(static_cast<std::uint16_t*>(out), [u](std::size_t i) { return float_to_bf16(u(i)); });
    break;
  }
}

void vecadd_reference(dtype type, const void* a, const void* b, void* c, std::size_t n,
                      thread_pool& pool) {
  pool.parallel_for(n, [&](std::size_t begin, std::size_t end) {
    switch (type) {
    case dtype::f32:
      add_range(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c),
                begin, end);
      break;
    case dtype::f64:
      add_range(static_cast<const double*>(a), static_cast<const double*>(b),
                static_cast<double*>(c), begin, end);
      break;
    case dtype::f16:
      add_range_16(static_cast<const std::uint16_t*>(a), static_cast<const std::uint16_t*>(b),
                   static_cast<std::uint16_t*>(c), begin, end, widen_half, narrow_half);
      break;
    case dtype::bf16:
      add_range_16(static_cast<const std::uint16_t*>(a), static_cast<const std::uint16_t*>(b),
                   static_cast<std::uint16_t*>(c), begin, end, widen_bf16, narrow_bf16);
      break;
    }
  });
}

std::string vecadd_tolerance_rule(dtype type) {
  switch (type) {
  case dtype::f32:
  case dtype::f64: return "exact";
  case dtype::f16: return "abs <= 1 ulp of f16 (2^-10 relative)";
  case dtype::bf16: return "abs <= 1 ulp of bf16 (2^-7 relative)";
  }
  return "?";
}

double element_value(dtype type, const void* p, std::size_t i) {
  switch (type) {
  case dtype::f32: return static_cast<const float*>(p)[i];
  case dtype::f64: return static_cast<const double*>(p)[i];
  case dtype::f16: return half_to_float(static_cast<const std::uint16_t*>(p)[i]);
  case dtype::bf16: return bf16_to_float(static_cast<const std::uint16_t*>(p)[i]);
  }
  return 0;
}

namespace {

/// One unit in the last place at |x| for the 16-bit types (normal range).
double ulp16(dtype type, double x) {
  const int mantissa_bits = type == dtype::f16 ? 10 : 7;
  const double ax = std::max(std::abs(x), type == dtype::f16 ? 6.103515625e-05 : 1.17549435e-38);
  return std::ldexp(1.0, std::ilogb(ax) - mantissa_bits);
}

/// Whether every element of [begin, end) is finite.
bool all_finite(dtype type, const void* p, std::size_t begin, std::size_t end) {
  const auto finite = [](auto x) { return std::isfinite(x); };
  // The 16-bit types are stored as bits: finite unless the exponent's bits are all ones.
  const auto exponent_below = [&](std::uint16_t mask) {
    const auto* x = static_cast<const std::uint16_t*>(p);
    return std::none_of(x + begin, x + end, [mask](std::uint16_t h) { return (h & mask) == mask; });
  };
  switch (type) {
  case dtype::f32:
    return std::all_of(static_cast<const float*>(p) + begin, static_cast<const float*>(p) + end,
                       finite);
  case dtype::f64:
    return std::all_of(static_cast<const double*>(p) + begin, static_cast<const double*>(p) + end,
                       finite);
  case dtype::f16: return exponent_below(0x7C00U);
  case dtype::bf16: return exponent_below(0x7F80U);
  }
  return false;
}

} // namespace

verification check_vecadd(dtype type, const void* expected, const void* got, std::size_t n,
                          thread_pool& pool) {
  const bool exact = type == dtype::f32 || type == dtype::f64;
  verification v;
  v.method = vecadd_tolerance_rule(type);
  const auto bytes = same_bytes(expected, got, dtype_size(type));
  const auto element = [&](std::size_t i) {
    const double e = element_value(type, expected, i);
    const double g = element_value(type, got, i);
    const double err = std::isnan(g) ? std::numeric_limits<double>::infinity() : std::abs(g - e);
    // Equal NaN bits are not a verified result.
    const bool ok =
        std::isfinite(e) && std::isfinite(g) && (exact ? bytes(i, i + 1) : err <= ulp16(type, e));
    return element_outcome{err, ok};
  };
  // A block of finite elements equal bit for bit passes without a look at each (error 0).
  const auto same = [&](std::size_t begin, std::size_t end) {
    return bytes(begin, end) && all_finite(type, expected, begin, end);
  };
  const auto first_bad = check_elements(n, pool, v, element, same).first_bad;
  if (first_bad) {
    v.details["first_mismatch"] = {{"index", *first_bad},
                                   {"expected", element_value(type, expected, *first_bad)},
                                   {"got", element_value(type, got, *first_bad)}};
  }
  return v;
}

} // namespace gpubench
