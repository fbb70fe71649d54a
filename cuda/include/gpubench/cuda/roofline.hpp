#pragma once
// The roofline's kernel family (gpubench roofline, mixbench's design): every element of an array
// streamed from device memory goes through a chain of fused multiply-adds, y = y a + b, and is
// written back. The chain's length sets the arithmetic intensity: from a fraction of an FMA per
// element (memory-bound) to thousands (compute-bound). Kernels live in roofline.cu.
#include "gpubench/dtype.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpubench::cuda {

/// The FMAs of one launch. A lane is one element (f32, f64) or a pair of elements (f16, bf16:
/// one packed half2 FMA does two). `fmas` >= 1 FMAs on every lane whose index is a multiple of
/// `every`; `every` > 1 only with one FMA (fewer FMAs than lanes).
struct roofline_chain {
  std::uint32_t fmas = 1;
  std::uint32_t every = 1;
};

/// Elements of a lane: 2 for f16 and bf16 (half2), 1 otherwise.
constexpr std::size_t roofline_lane_elements(dtype t) noexcept {
  return t == dtype::f16 || t == dtype::bf16 ? 2 : 1;
}

/// out = the chain applied to in, `n` elements (a multiple of 8: whole 16-byte vectors), both
/// 16-byte aligned; `a` and `b` rounded to the element type. The grid: `grid` blocks of `block`
/// threads, each thread looping over the vectors beyond it (roofline_grid for a device-filling
/// one). Throws std::invalid_argument for a bad size, alignment or chain.
void launch_roofline(dtype t, const void* in, void* out, std::size_t n, roofline_chain chain,
                     double a, double b, int block, int grid, cudaStream_t s);

/// The grid that fills every SM of the current device once with the kernel's resident blocks.
int roofline_grid(dtype t, int block);

} // namespace gpubench::cuda
