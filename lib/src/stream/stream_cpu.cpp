#include "gpubench/stream/stream_cpu.hpp"

#include "gpubench/engine/check_elements.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace gpubench {

namespace {

// Compiled with -ffp-contract=off (lib/CMakeLists.txt): triad rounds the product, then the sum,
// as the kernels' _rn intrinsics do.
template <typename T>
dot_sums run_typed(cuda::stream_op op, T* __restrict a, T* __restrict b, T* __restrict c,
                   std::size_t n, thread_pool& pool) {
  const auto s = static_cast<T>(cuda::stream_scalar);
  std::mutex m;
  dot_sums total;
  pool.parallel_for(n, [&](std::size_t begin, std::size_t end) {
    switch (op) {
    case cuda::stream_op::copy:
      for (std::size_t i = begin; i < end; ++i) c[i] = a[i];
      break;
    case cuda::stream_op::mul:
      for (std::size_t i = begin; i < end; ++i) b[i] = s * c[i];
      break;
    case cuda::stream_op::add:
      for (std::size_t i = begin; i < end; ++i) c[i] = a[i] + b[i];
      break;
    case cuda::stream_op::triad:
      for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
      break;
    case cuda::stream_op::dot: {
      dot_sums part;
      for (std::size_t i = begin; i < end; ++i) {
        const double p = static_cast<double>(a[i]) * static_cast<double>(b[i]);
        part.sum += p;
        part.abs_sum += std::abs(p);
      }
      const std::lock_guard lock(m);
      total.sum += part.sum;
      total.abs_sum += part.abs_sum;
      break;
    }
    }
  });
  return total;
}

void expect_supported(dtype type) {
  if (type != dtype::f32 && type != dtype::f64)
    throw std::invalid_argument("stream reference: only f32 and f64 are supported");
}

} // namespace

dot_sums stream_reference(cuda::stream_op op, dtype type, void* a, void* b, void* c, std::size_t n,
                          thread_pool& pool) {
  expect_supported(type);
  if (type == dtype::f32)
    return run_typed(op, static_cast<float*>(a), static_cast<float*>(b), static_cast<float*>(c), n,
                     pool);
  return run_typed(op, static_cast<double*>(a), static_cast<double*>(b), static_cast<double*>(c), n,
                   pool);
}

verification check_stream_array(dtype type, const void* expected, const void* got, std::size_t n,
                                thread_pool& pool) {
  expect_supported(type);
  const auto value = [type](const void* p, std::size_t i) {
    return type == dtype::f32 ? static_cast<double>(static_cast<const float*>(p)[i])
                              : static_cast<const double*>(p)[i];
  };
  verification v;
  v.method = "exact";
  // Bit for bit: a block whose bytes all match passes without a look at its elements.
  const auto same = same_bytes(expected, got, dtype_size(type));
  const auto element = [&](std::size_t i) {
    if (same(i, i + 1)) return element_outcome{};
    const double g = value(got, i);
    return element_outcome{std::isnan(g) ? std::numeric_limits<double>::infinity()
                                         : std::abs(g - value(expected, i)),
                           false};
  };
  const auto first_bad = check_elements(n, pool, v, element, same).first_bad;
  if (first_bad)
    v.details["first_mismatch"] = {{"index", *first_bad},
                                   {"expected", value(expected, *first_bad)},
                                   {"got", value(got, *first_bad)}};
  return v;
}

double stream_dot_tolerance(std::size_t n, double abs_sum) noexcept {
  return 2.02 * static_cast<double>(n) * std::ldexp(1.0, -53) * abs_sum;
}

verification check_stream_dot(std::size_t n, const dot_sums& expected, double got) {
  verification v;
  v.performed = true;
  v.tolerance = stream_dot_tolerance(n, expected.abs_sum);
  v.method = "abs <= 2.02 n 2^-53 sum|a_i b_i|";
  v.checked = 1;
  const double err =
      std::isnan(got) ? std::numeric_limits<double>::infinity() : std::abs(got - expected.sum);
  v.max_abs_error = err;
  v.mismatches = err <= v.tolerance ? 0 : 1;
  v.passed = v.mismatches == 0;
  v.details["expected"] = expected.sum;
  v.details["got"] = got;
  return v;
}

} // namespace gpubench
