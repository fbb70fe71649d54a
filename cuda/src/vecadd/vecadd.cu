// c = a + b kernels: the source article's one-element-per-thread kernel, and the vectorized one,
// which is the 16-byte element-wise loop stream shares (core/elementwise16.cuh; ordinary caching:
// measured on an H200, evict-first `.cs` hints cost about 10% at 2^28 elements). Half types are
// added in float and rounded once, the same arithmetic the CPU reference replays, so every dtype
// can be verified element by element.
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/vecadd.hpp"

#include "core/elementwise16.cuh"
#include "core/per_device.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace gpubench::cuda {
namespace {

template <typename T>
__device__ __forceinline__ T add(T x, T y) {
  return x + y;
}
template <>
__device__ __forceinline__ __half add(__half x, __half y) {
  return __float2half_rn(__half2float(x) + __half2float(y));
}
template <>
__device__ __forceinline__ __nv_bfloat16 add(__nv_bfloat16 x, __nv_bfloat16 y) {
  return __float2bfloat16_rn(__bfloat162float(x) + __bfloat162float(y));
}

template <typename T>
__global__ void vecadd_seed(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                            std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = add(a[i], b[i]);
}

/// Scalar grid-stride loop: used when the pointers do not share a 16-byte alignment.
template <typename T>
__global__ void vecadd_strided(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                               std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    c[i] = add(a[i], b[i]);
}

/// c = a + b as an operation of the shared 16-byte element-wise loop.
template <typename T>
struct add_op {
  static constexpr int inputs = 2;
  __device__ T operator()(T x, T y) const { return add(x, y); }
};

template <typename T>
void launch_typed(const vecadd_launch& cfg, const T* a, const T* b, T* c, std::size_t n,
                  cudaStream_t s) {
  if (n == 0) return;
  const auto block = static_cast<unsigned>(cfg.block);
  if (cfg.kernel == vecadd_kernel::seed) {
    const std::size_t blocks = (n + block - 1) / block;
    vecadd_seed<T><<<static_cast<unsigned>(blocks), block, 0, s>>>(a, b, c, n);
    GPUBENCH_CHECK_LAUNCH("vecadd_seed");
    return;
  }
  const auto misalign = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16; };
  const auto blocks_for = [&](std::size_t items) {
    const std::size_t needed = std::max<std::size_t>(1, (items + block - 1) / block);
    return static_cast<unsigned>(cfg.grid > 0 ? std::min<std::size_t>(needed, cfg.grid) : needed);
  };
  if (misalign(a) != misalign(b) || misalign(a) != misalign(c)) {
    vecadd_strided<T><<<blocks_for(n), block, 0, s>>>(a, b, c, n);
    GPUBENCH_CHECK_LAUNCH("vecadd_strided");
    return;
  }
  // Peel the elements before the first 16-byte boundary so the vector loop is aligned.
  const std::size_t head = std::min(n, ((16 - misalign(a)) % 16) / sizeof(T));
  if (head > 0) {
    vecadd_seed<T><<<1, static_cast<unsigned>(head), 0, s>>>(a, b, c, head);
    GPUBENCH_CHECK_LAUNCH("vecadd_seed (head)");
  }
  const std::size_t rest = n - head;
  if (rest == 0) return;
  elementwise16<T><<<blocks_for(rest / (16 / sizeof(T))), block, 0, s>>>(
      a + head, b + head, c + head, rest, add_op<T>{});
  GPUBENCH_CHECK_LAUNCH("vecadd_vectorized");
}

} // namespace

namespace {

/// The add kernel of element type `type`: each type is its own instantiation, with its own
/// registers, so its own occupancy.
const void* add_kernel(dtype type) {
  switch (type) {
  case dtype::f32: return reinterpret_cast<const void*>(elementwise16<float, add_op<float>>);
  case dtype::f64: return reinterpret_cast<const void*>(elementwise16<double, add_op<double>>);
  case dtype::f16: return reinterpret_cast<const void*>(elementwise16<__half, add_op<__half>>);
  case dtype::bf16:
    return reinterpret_cast<const void*>(elementwise16<__nv_bfloat16, add_op<__nv_bfloat16>>);
  }
  throw std::invalid_argument("vecadd: unknown element type");
}

} // namespace

int vecadd_default_grid(int device, dtype type, int block) {
  return std::max(1, detail::sm_count(device) * detail::blocks_per_sm(add_kernel(type), block));
}

void launch_vecadd(const vecadd_launch& cfg, const void* a, const void* b, void* c, std::size_t n,
                   cudaStream_t s) {
  switch (cfg.type) {
  case dtype::f32:
    launch_typed(cfg, static_cast<const float*>(a), static_cast<const float*>(b),
                 static_cast<float*>(c), n, s);
    break;
  case dtype::f64:
    launch_typed(cfg, static_cast<const double*>(a), static_cast<const double*>(b),
                 static_cast<double*>(c), n, s);
    break;
  case dtype::f16:
    launch_typed(cfg, static_cast<const __half*>(a), static_cast<const __half*>(b),
                 static_cast<__half*>(c), n, s);
    break;
  case dtype::bf16:
    launch_typed(cfg, static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
                 static_cast<__nv_bfloat16*>(c), n, s);
    break;
  }
}

} // namespace gpubench::cuda
