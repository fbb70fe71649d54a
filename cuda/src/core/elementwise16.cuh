// The 16-byte element-wise loop that vecadd and stream share: 16-byte loads and stores, a grid
// that strides over the vectors two per trip (so a thread of a device-sized grid keeps two
// independent loads per array in flight; with a grid covering every vector each thread moves one),
// then the scalar tail. The operation is a functor with `inputs` (1 or 2): the second array is not
// read when it is 1. The arrays must be 16-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpubench::cuda {

/// The elements of one 16-byte vector.
template <typename T>
struct lanes16 {
  static constexpr int count = 16 / sizeof(T);
  T v[count];
};

template <typename T>
__device__ __forceinline__ lanes16<T> unpack16(uint4 x) {
  lanes16<T> l;
  memcpy(l.v, &x, 16);
  return l;
}

template <typename T, typename Op>
__device__ __forceinline__ uint4 apply16(const Op& op, uint4 x, uint4 y) {
  lanes16<T> xs = unpack16<T>(x);
  const lanes16<T> ys = unpack16<T>(y);
#pragma unroll
  for (int e = 0; e < lanes16<T>::count; ++e) xs.v[e] = op(xs.v[e], ys.v[e]);
  memcpy(&x, xs.v, 16);
  return x;
}

/// out = op(x, y) element by element; y is not read when Op::inputs is 1.
template <typename T, typename Op>
__global__ void elementwise16(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out,
                              std::size_t n, Op op) {
  constexpr std::size_t per_vec = lanes16<T>::count;
  const std::size_t nvec = n / per_vec;
  const auto* xv = reinterpret_cast<const uint4*>(x);
  const auto* yv = reinterpret_cast<const uint4*>(y);
  auto* ov = reinterpret_cast<uint4*>(out);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint4 none{};
  for (; i + stride < nvec; i += 2 * stride) {
    const uint4 x0 = xv[i];
    const uint4 x1 = xv[i + stride];
    const uint4 y0 = Op::inputs == 2 ? yv[i] : none;
    const uint4 y1 = Op::inputs == 2 ? yv[i + stride] : none;
    ov[i] = apply16<T>(op, x0, y0);
    ov[i + stride] = apply16<T>(op, x1, y1);
  }
  if (i < nvec) ov[i] = apply16<T>(op, xv[i], Op::inputs == 2 ? yv[i] : none);
  // Fewer than per_vec elements remain, and every grid has at least 32 threads.
  const std::size_t tail =
      nvec * per_vec + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < n) out[tail] = op(x[tail], Op::inputs == 2 ? y[tail] : T{});
}

} // namespace gpubench::cuda
