#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/roofline.hpp"

#include "core/per_device.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace gpubench::cuda {
namespace {

__device__ __forceinline__ float fma_lane(float y, float a, float b) { return fmaf(y, a, b); }
__device__ __forceinline__ double fma_lane(double y, double a, double b) { return fma(y, a, b); }
__device__ __forceinline__ __half2 fma_lane(__half2 y, __half2 a, __half2 b) {
  return __hfma2(y, a, b);
}
__device__ __forceinline__ __nv_bfloat162 fma_lane(__nv_bfloat162 y, __nv_bfloat162 a,
                                                   __nv_bfloat162 b) {
  return __hfma2(y, a, b);
}

/// One 16-byte vector through the chain. Its lanes are independent chains, so a thread keeps
/// several FMAs in flight; with `every` > 1 only the lanes whose global index is a multiple of it
/// take their one FMA.
template <typename L>
__device__ __forceinline__ uint4 chain16(uint4 raw, std::size_t vector, std::uint32_t fmas,
                                         std::uint32_t every, L a, L b) {
  constexpr int lanes = 16 / sizeof(L);
  L x[lanes];
  memcpy(x, &raw, 16);
  if (every == 1) {
#pragma unroll 8
    for (std::uint32_t k = 0; k < fmas; ++k) {
#pragma unroll
      for (int e = 0; e < lanes; ++e) x[e] = fma_lane(x[e], a, b);
    }
  } else {
#pragma unroll
    for (int e = 0; e < lanes; ++e)
      if ((vector * lanes + static_cast<std::size_t>(e)) % every == 0) x[e] = fma_lane(x[e], a, b);
  }
  memcpy(&raw, x, 16);
  return raw;
}

/// Two vectors a trip (two independent loads in flight per thread in the memory-bound range,
/// twice the chains in the compute-bound one), grid-stride over the rest.
template <typename L>
__global__ void roofline_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                std::size_t vectors, std::uint32_t fmas, std::uint32_t every, L a,
                                L b) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t v = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors;
       v += 2 * stride) {
    const std::size_t w = v + stride;
    const uint4 x = in[v];
    uint4 y{};
    if (w < vectors) y = in[w];
    out[v] = chain16<L>(x, v, fmas, every, a, b);
    if (w < vectors) out[w] = chain16<L>(y, w, fmas, every, a, b);
  }
}

template <typename L>
L lane_of(double x);
template <>
float lane_of<float>(double x) {
  return static_cast<float>(x);
}
template <>
double lane_of<double>(double x) {
  return x;
}
template <>
__half2 lane_of<__half2>(double x) {
  return __float2half2_rn(static_cast<float>(x));
}
template <>
__nv_bfloat162 lane_of<__nv_bfloat162>(double x) {
  return __float2bfloat162_rn(static_cast<float>(x));
}

template <typename L>
void launch_as(const void* in, void* out, std::size_t vectors, roofline_chain c, double a, double b,
               int block, int grid, cudaStream_t s) {
  roofline_kernel<L><<<grid, block, 0, s>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out),
                                            vectors, c.fmas, c.every, lane_of<L>(a), lane_of<L>(b));
  GPUBENCH_CHECK_LAUNCH("roofline_kernel");
}

const void* kernel_of(dtype t) {
  switch (t) {
  case dtype::f32: return reinterpret_cast<const void*>(&roofline_kernel<float>);
  case dtype::f64: return reinterpret_cast<const void*>(&roofline_kernel<double>);
  case dtype::f16: return reinterpret_cast<const void*>(&roofline_kernel<__half2>);
  case dtype::bf16: return reinterpret_cast<const void*>(&roofline_kernel<__nv_bfloat162>);
  }
  return nullptr;
}

} // namespace

void launch_roofline(dtype t, const void* in, void* out, std::size_t n, roofline_chain chain,
                     double a, double b, int block, int grid, cudaStream_t s) {
  if (n == 0 || n % 8 != 0)
    throw std::invalid_argument("roofline: n must be a positive multiple of 8, got " +
                                std::to_string(n));
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
    throw std::invalid_argument("roofline: arrays must be 16-byte aligned");
  if (chain.fmas == 0 || chain.every == 0 || (chain.every > 1 && chain.fmas != 1))
    throw std::invalid_argument("roofline: a chain has at least one FMA, and one when every > 1");
  if (block <= 0 || block > 1024 || block % 32 != 0 || grid <= 0)
    throw std::invalid_argument("roofline: bad launch shape");
  const std::size_t vectors = n * dtype_size(t) / 16;
  switch (t) {
  case dtype::f32: launch_as<float>(in, out, vectors, chain, a, b, block, grid, s); break;
  case dtype::f64: launch_as<double>(in, out, vectors, chain, a, b, block, grid, s); break;
  case dtype::f16: launch_as<__half2>(in, out, vectors, chain, a, b, block, grid, s); break;
  case dtype::bf16: launch_as<__nv_bfloat162>(in, out, vectors, chain, a, b, block, grid, s); break;
  }
}

int roofline_grid(dtype t, int block) { return detail::resident_grid(kernel_of(t), block); }

} // namespace gpubench::cuda
