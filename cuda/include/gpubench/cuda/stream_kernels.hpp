#pragma once
// Launchers for BabelStream's five kernels (gpubench stream). Kernels live in stream_kernels.cu.
// Named stream_kernels, not stream, because gpubench/cuda/stream.hpp holds the CUDA stream RAII.
#include "gpubench/dtype.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <string_view>

namespace gpubench::cuda {

/// BabelStream's kernels on arrays a, b, c and the scalar s:
/// copy c = a; mul b = s c; add c = a + b; triad a = b + s c; dot sum of a[i] b[i].
enum class stream_op { copy, mul, add, triad, dot };

inline constexpr std::array<stream_op, 5> all_stream_ops{
    stream_op::copy, stream_op::mul, stream_op::add, stream_op::triad, stream_op::dot};

constexpr std::string_view stream_op_name(stream_op op) noexcept {
  switch (op) {
  case stream_op::copy: return "copy";
  case stream_op::mul: return "mul";
  case stream_op::add: return "add";
  case stream_op::triad: return "triad";
  case stream_op::dot: return "dot";
  }
  return "?";
}

/// Arrays each kernel moves, reads and writes counted once each (BabelStream's weights).
constexpr int stream_op_arrays(stream_op op) noexcept {
  return op == stream_op::add || op == stream_op::triad ? 3 : 2;
}

/// FLOPs per element: none for copy, one multiply (mul) or add (add), a multiply and an add
/// (triad, dot).
constexpr int stream_op_flops(stream_op op) noexcept {
  switch (op) {
  case stream_op::copy: return 0;
  case stream_op::mul:
  case stream_op::add: return 1;
  case stream_op::triad:
  case stream_op::dot: return 2;
  }
  return 0;
}

/// The array a kernel writes: 0 = a, 1 = b, 2 = c; -1 for dot, whose output is one double.
constexpr int stream_op_output(stream_op op) noexcept {
  switch (op) {
  case stream_op::copy:
  case stream_op::add: return 2;
  case stream_op::mul: return 1;
  case stream_op::triad: return 0;
  case stream_op::dot: return -1;
  }
  return -1;
}

/// The scalar of mul and triad (BabelStream's), rounded to the element type.
inline constexpr double stream_scalar = 0.4;

struct stream_launch {
  dtype type = dtype::f32; ///< f32 or f64
  int block = 256;         ///< threads per block, a multiple of 32 up to 1024
  int grid = 1;            ///< blocks at most; each thread loops over the vectors beyond the grid
};

/// Device memory a, b, c (16-byte aligned, n elements each) and dot's workspace.
struct stream_arrays {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  /// stream_dot_workspace_bytes(grid) bytes, zeroed once before the first dot; every dot leaves
  /// its counter at zero again, so it is not cleared inside the timed region.
  void* dot_workspace = nullptr;
};

/// A grid sized to the device: every SM filled once with resident blocks of `op`'s kernel.
int stream_default_grid(int device, stream_op op, dtype type, int block);

/// The grid of `--grid vectors`: one 16-byte vector of an array of `bytes` per thread, at most
/// 2^20 blocks (beyond, threads loop). Shared by gpubench stream, its nvbench cross-check and
/// gpubench roofline.
int stream_vectors_grid(std::size_t bytes, int block) noexcept;

/// The most blocks dot takes: its last block adds one partial per block, and beyond 2^14 blocks
/// that serial tail costs more than the extra blocks gain, so dot's threads loop instead.
inline constexpr int stream_dot_max_grid = 1 << 14;

/// Bytes of dot's workspace for a grid of `grid` blocks (a counter, the result, one partial sum
/// per block).
std::size_t stream_dot_workspace_bytes(int grid) noexcept;

/// Where dot leaves its result (a double in device memory) inside the workspace.
double* stream_dot_result(void* dot_workspace) noexcept;

/// Enqueues `op` over n elements on `s`, then checks the launch. Throws std::invalid_argument for
/// a type other than f32/f64, a bad block or grid, or arrays that are not 16-byte aligned.
void launch_stream(stream_op op, const stream_launch& cfg, const stream_arrays& arrays,
                   std::size_t n, cudaStream_t s);

} // namespace gpubench::cuda
