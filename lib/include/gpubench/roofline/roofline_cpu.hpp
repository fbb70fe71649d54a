#pragma once
// The host side of gpubench roofline: which FMA chain gives an arithmetic intensity, the FLOPs and
// bytes a launch does, the input, and the check of every output element against the same chain
// computed on the CPU (cuda/roofline.hpp is the kernel family).
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/roofline.hpp"
#include "gpubench/results/result.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace gpubench {

/// One point's work: the chain, and what a launch over `n` elements does with it.
struct roofline_work {
  cuda::roofline_chain chain;
  double flops = 0;     ///< 2 per element FMA, counted exactly
  double bytes = 0;     ///< every element read once and written once
  double intensity = 0; ///< flops / bytes, the one the chain gives (nearest to the one asked)
};

/// The chain nearest to `intensity` FLOPs per byte for `t` over `n` elements (a multiple of 8):
/// intensity x element size FMAs per element, rounded; below one, one FMA on one lane in `every`.
roofline_work roofline_work_for(dtype t, std::size_t n, double intensity);

/// The chain's constants for `t`: a = 1 - 2^-m (m = 10 for f32 and f64, 8 for f16, 6 for bf16,
/// each exact in its type) and b = 1 - a. From [0, 1) y = y a + b moves toward 1 without leaving
/// [0, 1]: no overflow and no subnormal at any length, and a chain one FMA shorter or longer
/// gives another value.
std::pair<double, double> roofline_constants(dtype t);

/// The distinct input values: element i holds value (i's hash) mod this, so that the CPU computes
/// each chain once and still checks every element.
inline constexpr std::size_t roofline_distinct_values = 4096;

/// `n` elements of `t` in [0, 1) from (seed, index) into `out`.
void fill_roofline_input(dtype t, void* out, std::size_t n, std::uint64_t seed, thread_pool& pool);

/// Every element of `got` against the chain applied on the CPU to the same input (exact for f32
/// and f64, whose FMA rounds once as the GPU's does; within 2^-10 for f16 and 2^-7 for bf16,
/// whose emulation may round twice), or against the input where the chain skips the element.
verification check_roofline(dtype t, std::size_t n, const roofline_work& w, std::uint64_t seed,
                            const void* got, thread_pool& pool);

} // namespace gpubench
