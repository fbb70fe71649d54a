#pragma once
// Launchers for c = a + b. Kernels live in vecadd.cu.
#include "gpubench/dtype.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

namespace gpubench::cuda {

enum class vecadd_kernel {
  seed,       ///< one element per thread, as in the source article
  vectorized, ///< 16-byte loads/stores, scalar tail; grid per vecadd_launch::grid
};

constexpr std::string_view vecadd_kernel_name(vecadd_kernel k) noexcept {
  return k == vecadd_kernel::seed ? "seed" : "vectorized";
}

struct vecadd_launch {
  vecadd_kernel kernel = vecadd_kernel::vectorized;
  dtype type = dtype::f32;
  int block = 256;
  /// Blocks of the vectorized kernel: 0 gives every thread one 16-byte vector (the fastest on an
  /// H200); a positive count caps the grid and each thread loops over several vectors.
  int grid = 0;
};

/// A grid sized to the device: enough resident blocks of the vectorized kernel for `type` to fill
/// every SM once (cudaOccupancyMaxActiveBlocksPerMultiprocessor on that instantiation).
int vecadd_default_grid(int device, dtype type, int block);

/// Enqueues c[i] = a[i] + b[i] for i < n on `s`, then checks the launch.
void launch_vecadd(const vecadd_launch& cfg, const void* a, const void* b, void* c, std::size_t n,
                   cudaStream_t s);

} // namespace gpubench::cuda
