// BabelStream's kernels for Hopper bandwidth: Copy, Mul, Add and Triad are operations on the
// 16-byte element-wise loop vecadd also uses (core/elementwise16.cuh), over a grid sized to the
// device; Dot has the same loop with a reduction. Products and sums use the _rn
// intrinsics, which the compiler never contracts into fused multiply-adds, so the CPU reference
// (compiled with -ffp-contract=off) reproduces every element bit for bit. Dot sums in double:
// per-block partials through shuffles and shared memory, then the last block to finish adds the
// partials in block order, so the result does not depend on which block finished first.
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/stream_kernels.hpp"

#include "core/elementwise16.cuh"
#include "core/per_device.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace gpubench::cuda {
namespace {

__device__ __forceinline__ float mul_rn(float x, float y) { return __fmul_rn(x, y); }
__device__ __forceinline__ double mul_rn(double x, double y) { return __dmul_rn(x, y); }
__device__ __forceinline__ float add_rn(float x, float y) { return __fadd_rn(x, y); }
__device__ __forceinline__ double add_rn(double x, double y) { return __dadd_rn(x, y); }

// The four element-wise kernels as one loop over an operation with one or two inputs.
template <typename T>
struct copy_op {
  static constexpr int inputs = 1;
  __device__ T operator()(T x, T /*unused*/) const { return x; }
};
template <typename T>
struct mul_op {
  static constexpr int inputs = 1;
  T scalar;
  __device__ T operator()(T x, T /*unused*/) const { return mul_rn(scalar, x); }
};
template <typename T>
struct add_op {
  static constexpr int inputs = 2;
  __device__ T operator()(T x, T y) const { return add_rn(x, y); }
};
template <typename T>
struct triad_op {
  static constexpr int inputs = 2;
  T scalar;
  __device__ T operator()(T x, T y) const { return add_rn(x, mul_rn(scalar, y)); }
};

/// The block's sum in thread 0 (other threads return partial values). blockDim.x is a multiple of
/// 32; the leading barrier lets a block call it twice.
__device__ double block_sum(double v) {
  __shared__ double warp_sums[32];
  __syncthreads();
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFU, v, offset);
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFU, v, offset);
  }
  return v;
}

template <typename T>
__device__ __forceinline__ double dot_vec(uint4 x, uint4 y) {
  const lanes16<T> xs = unpack16<T>(x);
  const lanes16<T> ys = unpack16<T>(y);
  double s = 0;
#pragma unroll
  for (int e = 0; e < lanes16<T>::count; ++e)
    s += static_cast<double>(xs.v[e]) * static_cast<double>(ys.v[e]);
  return s;
}

/// Workspace: [0, 8) the counter of finished blocks, [8, 16) the result, then one partial per
/// block.
constexpr std::size_t dot_result_offset = 8;
constexpr std::size_t dot_partials_offset = 16;

template <typename T>
__global__ void stream_dot(const T* __restrict__ a, const T* __restrict__ b, std::size_t n,
                           unsigned* __restrict__ finished, double* __restrict__ result,
                           double* __restrict__ partials) {
  constexpr std::size_t per_vec = 16 / sizeof(T);
  const std::size_t nvec = n / per_vec;
  const auto* av = reinterpret_cast<const uint4*>(a);
  const auto* bv = reinterpret_cast<const uint4*>(b);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double sum = 0;
  for (; i + stride < nvec; i += 2 * stride) {
    const uint4 a0 = av[i];
    const uint4 a1 = av[i + stride];
    const uint4 b0 = bv[i];
    const uint4 b1 = bv[i + stride];
    sum += dot_vec<T>(a0, b0) + dot_vec<T>(a1, b1);
  }
  if (i < nvec) sum += dot_vec<T>(av[i], bv[i]);
  const std::size_t tail =
      nvec * per_vec + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) sum += static_cast<double>(a[tail]) * static_cast<double>(b[tail]);

  sum = block_sum(sum);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    __threadfence(); // the partial is visible before the counter says so
    last = atomicAdd(finished, 1U) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  double total = 0;
  for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) total += __ldcg(&partials[k]);
  total = block_sum(total);
  if (threadIdx.x == 0) {
    *result = total;
    *finished = 0; // ready for the next launch
  }
}

template <typename T>
unsigned blocks_for(const stream_launch& cfg, std::size_t n) {
  const std::size_t vectors = std::max<std::size_t>(1, n / (16 / sizeof(T)));
  const std::size_t block = static_cast<std::size_t>(cfg.block);
  const std::size_t needed = (vectors + block - 1) / block;
  return static_cast<unsigned>(std::min<std::size_t>(needed, static_cast<std::size_t>(cfg.grid)));
}

template <typename T>
void launch_typed(stream_op op, const stream_launch& cfg, const stream_arrays& arrays,
                  std::size_t n, cudaStream_t s) {
  auto* a = static_cast<T*>(arrays.a);
  auto* b = static_cast<T*>(arrays.b);
  auto* c = static_cast<T*>(arrays.c);
  const unsigned grid = blocks_for<T>(cfg, n);
  const auto block = static_cast<unsigned>(cfg.block);
  const auto scalar = static_cast<T>(stream_scalar);
  switch (op) {
  case stream_op::copy:
    elementwise16<T><<<grid, block, 0, s>>>(a, nullptr, c, n, copy_op<T>{});
    GPUBENCH_CHECK_LAUNCH("stream copy");
    break;
  case stream_op::mul:
    elementwise16<T><<<grid, block, 0, s>>>(c, nullptr, b, n, mul_op<T>{scalar});
    GPUBENCH_CHECK_LAUNCH("stream mul");
    break;
  case stream_op::add:
    elementwise16<T><<<grid, block, 0, s>>>(a, b, c, n, add_op<T>{});
    GPUBENCH_CHECK_LAUNCH("stream add");
    break;
  case stream_op::triad:
    elementwise16<T><<<grid, block, 0, s>>>(b, c, a, n, triad_op<T>{scalar});
    GPUBENCH_CHECK_LAUNCH("stream triad");
    break;
  case stream_op::dot: {
    auto* ws = static_cast<std::byte*>(arrays.dot_workspace);
    stream_dot<T><<<grid, block, 0, s>>>(a, b, n, reinterpret_cast<unsigned*>(ws),
                                         reinterpret_cast<double*>(ws + dot_result_offset),
                                         reinterpret_cast<double*>(ws + dot_partials_offset));
    GPUBENCH_CHECK_LAUNCH("stream dot");
    break;
  }
  }
}

/// The kernel of `op` for element type T, for the occupancy calculator.
template <typename T>
const void* kernel_of(stream_op op) {
  switch (op) {
  case stream_op::copy: return reinterpret_cast<const void*>(elementwise16<T, copy_op<T>>);
  case stream_op::mul: return reinterpret_cast<const void*>(elementwise16<T, mul_op<T>>);
  case stream_op::add: return reinterpret_cast<const void*>(elementwise16<T, add_op<T>>);
  case stream_op::triad: return reinterpret_cast<const void*>(elementwise16<T, triad_op<T>>);
  case stream_op::dot: return reinterpret_cast<const void*>(stream_dot<T>);
  }
  throw std::invalid_argument("stream kernels: unknown operation");
}

void expect_supported(dtype type) {
  if (type != dtype::f32 && type != dtype::f64)
    throw std::invalid_argument("stream kernels: only f32 and f64 are supported");
}

} // namespace

int stream_default_grid(int device, stream_op op, dtype type, int block) {
  expect_supported(type);
  const void* kernel = type == dtype::f32 ? kernel_of<float>(op) : kernel_of<double>(op);
  return std::max(1, detail::sm_count(device) * detail::blocks_per_sm(kernel, block));
}

int stream_vectors_grid(std::size_t bytes, int block) noexcept {
  constexpr std::size_t max_grid = std::size_t{1} << 20U;
  const std::size_t vectors = std::max<std::size_t>(1, bytes / 16);
  const auto per_block = static_cast<std::size_t>(std::max(block, 1));
  return static_cast<int>(std::min((vectors + per_block - 1) / per_block, max_grid));
}

std::size_t stream_dot_workspace_bytes(int grid) noexcept {
  return dot_partials_offset + sizeof(double) * static_cast<std::size_t>(std::max(grid, 1));
}

double* stream_dot_result(void* dot_workspace) noexcept {
  return reinterpret_cast<double*>(static_cast<std::byte*>(dot_workspace) + dot_result_offset);
}

void launch_stream(stream_op op, const stream_launch& cfg, const stream_arrays& arrays,
                   std::size_t n, cudaStream_t s) {
  expect_supported(cfg.type);
  if (cfg.block < 32 || cfg.block > 1024 || cfg.block % 32 != 0)
    throw std::invalid_argument("stream kernels: block must be a multiple of 32 up to 1024");
  if (cfg.grid < 1) throw std::invalid_argument("stream kernels: grid must be at least 1");
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (!aligned(arrays.a) || !aligned(arrays.b) || !aligned(arrays.c))
    throw std::invalid_argument("stream kernels: arrays must be 16-byte aligned");
  if (op == stream_op::dot && arrays.dot_workspace == nullptr)
    throw std::invalid_argument("stream kernels: dot needs its workspace");
  if (n == 0) return;
  if (cfg.type == dtype::f32)
    launch_typed<float>(op, cfg, arrays, n, s);
  else
    launch_typed<double>(op, cfg, arrays, n, s);
}

} // namespace gpubench::cuda
