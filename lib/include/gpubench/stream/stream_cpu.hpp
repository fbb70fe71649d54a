#pragma once
// CPU reference for gpubench stream: BabelStream's kernels on host arrays, multi-threaded, with
// the kernels' arithmetic (no fused multiply-add), and the checks of GPU outputs against it.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/stream_kernels.hpp"
#include "gpubench/dtype.hpp"
#include "gpubench/results/result.hpp"

#include <cstddef>

namespace gpubench {

/// What dot returns: the sum of a[i] b[i] in double and the sum of |a[i] b[i]|, which bounds the
/// rounding error of any summation order (stream_dot_tolerance).
struct dot_sums {
  double sum = 0;
  double abs_sum = 0;
};

/// Runs `op` in place on the n-element arrays a, b, c of `type` (f32 or f64): copy c = a,
/// mul b = s c, add c = a + b, triad a = b + s c, with s = stream_scalar rounded to the type.
/// Dot changes nothing and returns its sums; the other kernels return zeros.
dot_sums stream_reference(cuda::stream_op op, dtype type, void* a, void* b, void* c, std::size_t n,
                          thread_pool& pool);

/// Every element of `got` must equal `expected` bit for bit: both sides round each product and
/// sum once, in the same order.
verification check_stream_array(dtype type, const void* expected, const void* got, std::size_t n,
                                thread_pool& pool);

/// Dot's tolerance. Both sides sum n products in double, in different orders; for any order the
/// error of such a sum is at most n u sum|a_i b_i| (u = 2^-53; f32 products are exact in double,
/// f64 products add at most u |a_i b_i| each, within the same bound to first order). Two results
/// each within that bound of the exact value differ by at most twice it; 1% covers second-order
/// terms (n u <= 2^-17 for any n gpubench accepts).
double stream_dot_tolerance(std::size_t n, double abs_sum) noexcept;

/// Compares the GPU's dot with the CPU's within stream_dot_tolerance.
verification check_stream_dot(std::size_t n, const dot_sums& expected, double got);

} // namespace gpubench
