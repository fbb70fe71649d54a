#pragma once
// CPU reference for c = a + b, multi-threaded and vectorized by the compiler, and the
// element-by-element check of a GPU result against it.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/dtype.hpp"
#include "gpubench/results/result.hpp"

#include <cstddef>
#include <cstdint>

namespace gpubench {

/// Fills `n` elements of `type` at `out` with uniform values in [-1, 1) from (seed, stream).
void fill_random(dtype type, void* out, std::size_t n, std::uint64_t seed, std::uint64_t stream,
                 thread_pool& pool);

/// c = a + b. Half types are added in float and rounded once, as the kernels do.
void vecadd_reference(dtype type, const void* a, const void* b, void* c, std::size_t n,
                      thread_pool& pool);

/// Absolute tolerance rule per dtype: exact (0) for f32/f64, one unit in the last place of the
/// expected value for f16/bf16.
std::string vecadd_tolerance_rule(dtype type);

/// Element `i` of an array of `type` (16-bit types as their raw patterns) as a double.
double element_value(dtype type, const void* p, std::size_t i);

/// Compares every element of `got` with `expected`.
verification check_vecadd(dtype type, const void* expected, const void* got, std::size_t n,
                          thread_pool& pool);

} // namespace gpubench
