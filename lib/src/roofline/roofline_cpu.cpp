#include "gpubench/roofline/roofline_cpu.hpp"

#include "gpubench/core/half.hpp"
#include "gpubench/core/random.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

namespace gpubench {

namespace {

/// The index of the distinct value element i holds.
std::size_t value_index(std::uint64_t seed, std::size_t i) {
  return static_cast<std::size_t>(random_bits(seed, 7, i) % roofline_distinct_values);
}

/// Distinct value j, rounded to `t`, as a double.
double distinct_value(dtype t, std::uint64_t seed, std::size_t j) {
  const double x = random_unit_double(seed, 8, j);
  switch (t) {
  case dtype::f64: return x;
  case dtype::f32: return static_cast<float>(x);
  case dtype::f16: return half_to_float(float_to_half(static_cast<float>(x)));
  case dtype::bf16: return bf16_to_float(float_to_bf16(static_cast<float>(x)));
  }
  return x;
}

/// `v` rounded to `t` (16-bit types: through float, so a tie may round twice).
double round_to(dtype t, double v) {
  switch (t) {
  case dtype::f64: return v;
  case dtype::f32: return static_cast<float>(v);
  case dtype::f16: return half_to_float(float_to_half(static_cast<float>(v)));
  case dtype::bf16: return bf16_to_float(float_to_bf16(static_cast<float>(v)));
  }
  return v;
}

/// The chain of `fmas` FMAs from x, each rounded once as the GPU's: f32 and f64 by std::fma; the
/// 16-bit types exactly in double (a product of two 11-bit significands and a sum within 53 bits),
/// then rounded to the type.
double chain_of(dtype t, double x, std::uint32_t fmas, double a, double b) {
  if (t == dtype::f32) {
    auto y = static_cast<float>(x);
    const auto af = static_cast<float>(a);
    const auto bf = static_cast<float>(b);
    for (std::uint32_t k = 0; k < fmas; ++k) y = std::fma(y, af, bf);
    return y;
  }
  double y = x;
  for (std::uint32_t k = 0; k < fmas; ++k) y = round_to(t, std::fma(y, a, b));
  return y;
}

void store(dtype t, void* p, std::size_t i, double v) {
  switch (t) {
  case dtype::f64: static_cast<double*>(p)[i] = v; break;
  case dtype::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
  case dtype::f16: static_cast<std::uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
  case dtype::bf16: static_cast<std::uint16_t*>(p)[i] = float_to_bf16(static_cast<float>(v)); break;
  }
}

double tolerance_of(dtype t) {
  if (t == dtype::f16) return std::ldexp(1.0, -10);
  if (t == dtype::bf16) return std::ldexp(1.0, -7);
  return 0;
}

} // namespace

roofline_work roofline_work_for(dtype t, std::size_t n, double intensity) {
  const auto size = static_cast<double>(dtype_size(t));
  const double per_element = intensity * size; // FMAs: 2 FLOPs over 2 x size bytes each
  roofline_work w;
  if (per_element >= 1) {
    w.chain.fmas = static_cast<std::uint32_t>(std::lround(per_element));
  } else {
    w.chain.every = static_cast<std::uint32_t>(std::max(1L, std::lround(1 / per_element)));
  }
  const std::size_t lane_elements = cuda::roofline_lane_elements(t);
  const std::size_t lanes = n / lane_elements;
  const std::size_t gated = (lanes + w.chain.every - 1) / w.chain.every;
  w.flops = 2.0 * w.chain.fmas * static_cast<double>(gated * lane_elements);
  w.bytes = 2.0 * static_cast<double>(n) * size;
  w.intensity = w.flops / w.bytes;
  return w;
}

std::pair<double, double> roofline_constants(dtype t) {
  const int m = t == dtype::f16 ? 8 : t == dtype::bf16 ? 6 : 10;
  const double a = 1.0 - std::ldexp(1.0, -m);
  return {a, 1.0 - a};
}

void fill_roofline_input(dtype t, void* out, std::size_t n, std::uint64_t seed, thread_pool& pool) {
  std::array<double, roofline_distinct_values> values{};
  for (std::size_t j = 0; j < values.size(); ++j) values[j] = distinct_value(t, seed, j);
  pool.parallel_for(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) store(t, out, i, values[value_index(seed, i)]);
  });
}

verification check_roofline(dtype t, std::size_t n, const roofline_work& w, std::uint64_t seed,
                            const void* got, thread_pool& pool) {
  const auto constants = roofline_constants(t); // no structured binding: clang 14 cannot capture it
  const double a = constants.first;
  const double b = constants.second;
  std::vector<double> input(roofline_distinct_values);
  std::vector<double> chained(roofline_distinct_values);
  pool.parallel_for(input.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t j = begin; j < end; ++j) {
      input[j] = distinct_value(t, seed, j);
      chained[j] = chain_of(t, input[j], w.chain.fmas, a, b);
    }
  });
  const double tol = tolerance_of(t);
  const std::size_t lane_elements = cuda::roofline_lane_elements(t);
  std::mutex mutex;
  verification v;
  v.performed = true;
  v.tolerance = tol;
  v.method = tol == 0 ? "exact (the CPU's fma rounds once, as the GPU's)"
                      : fmt::format("|got - ref| <= {:g} (the CPU emulates the {} FMA in double, "
                                    "then rounds through float)",
                                    tol, dtype_name(t));
  std::uint64_t first_bad = n;
  pool.parallel_for(n, [&](std::size_t begin, std::size_t end) {
    std::uint64_t bad = 0;
    double worst = 0;
    std::uint64_t first = n;
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t j = value_index(seed, i);
      const bool gated = (i / lane_elements) % w.chain.every == 0;
      const double want = gated ? chained[j] : input[j];
      const double err = std::abs(element_value(t, got, i) - want);
      if (!(err <= tol)) { // NaN (a poisoned element never written) fails too
        ++bad;
        first = std::min<std::uint64_t>(first, i);
      }
      if (std::isfinite(err)) worst = std::max(worst, err);
    }
    const std::lock_guard lock(mutex);
    v.mismatches += bad;
    v.max_abs_error = std::max(v.max_abs_error, worst);
    first_bad = std::min(first_bad, first);
  });
  v.checked = n;
  v.passed = v.mismatches == 0;
  v.details["fmas_per_lane"] = w.chain.fmas;
  v.details["every"] = w.chain.every;
  if (!v.passed) v.details["first_mismatch"] = first_bad;
  return v;
}

} // namespace gpubench
