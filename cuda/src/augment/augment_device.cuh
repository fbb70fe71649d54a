#pragma once
// Device pieces shared by the fused kernel and the staged blur: the output-stationary tile, its
// blur border, the separable blur passes through shared memory, and the typed stores.
//
// A block owns tile_w x tile_h output pixels of one image. The blur needs `radius` more pixels on
// every side of the rotated image ("halo"), reflected at the image border (reflect-101). Halo
// values are staged in shared memory as `raw` (halo_h rows of raw_stride floats); the row pass
// writes `rows` (halo_h x tile_w), the column pass reads it and stores the outputs.
#include "gpubench/cuda/augment.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace gpubench::cuda::augment_detail {

namespace am = augment_math;

inline constexpr int tile_w = augment_tile_w;
inline constexpr int tile_h = augment_tile_h;
inline constexpr int block_threads = 256;
inline constexpr int row_segment = 4;       ///< outputs per thread in the row pass (one float4)
inline constexpr int column_segment = 8;    ///< output rows per thread in the column pass
inline constexpr int max_channel_group = 4; ///< channels staged in shared memory at once

/// Halo geometry for a radius (a compile-time one when R >= 0).
struct halo_shape {
  int radius;
  int w;      ///< tile_w + 2 radius
  int h;      ///< tile_h + 2 radius
  int stride; ///< floats per raw row: room for the row pass's float4 reads past the halo
  __host__ __device__ explicit halo_shape(int r)
      : radius(r), w(tile_w + 2 * r), h(tile_h + 2 * r), stride(tile_w + (2 * r + 3) / 4 * 4) {}
  [[nodiscard]] __host__ __device__ int raw_floats() const { return h * stride; }
  [[nodiscard]] __host__ __device__ int row_floats() const { return h * tile_w; }
};

using am::halo_coordinate;

/// What every augment kernel reads of the shape: the geometry and the normalization. The fused and
/// the staged kernels' arguments derive from it; fill_shape_args fills it.
struct shape_args {
  int channels;
  int height;
  int width;
  int crop;
  int size; ///< the output side (augment_shape::resize)
  int radius;
  float scale;
  float centre;
  float mean[augment_max_channels];
  float inv_std[augment_max_channels];
};

inline void fill_shape_args(shape_args& a, const augment_shape& shape) {
  a.channels = shape.channels;
  a.height = shape.height;
  a.width = shape.width;
  a.crop = shape.crop;
  a.size = shape.resize;
  a.radius = shape.radius;
  a.scale = shape.scale;
  a.centre = am::centre(shape.resize);
  for (int c = 0; c < augment_max_channels; ++c) {
    a.mean[c] = shape.mean[c];
    a.inv_std[c] = shape.inv_std[c];
  }
}

/// The blur's weights, copied from shared memory into registers when the radius is known at
/// compile time (R >= 0); with R < 0 they stay in shared memory.
template <int R>
struct blur_weights {
  float w[2 * R + 1];
  __device__ explicit blur_weights(const float* shared) {
#pragma unroll
    for (int k = 0; k <= 2 * R; ++k) w[k] = shared[k];
  }
  [[nodiscard]] __device__ const float* get() const { return w; }
};
template <>
struct blur_weights<-1> {
  const float* shared;
  __device__ explicit blur_weights(const float* s) : shared(s) {}
  [[nodiscard]] __device__ const float* get() const { return shared; }
};

/// Exact uint8 -> float without the conversion pipe: 2^23 + b as bits, minus 2^23.
__device__ __forceinline__ float biased_byte(std::uint32_t b) {
  return __uint_as_float(0x4B000000U | b);
}
__device__ __forceinline__ float byte_value(std::uint32_t b) {
  return __fsub_rn(biased_byte(b), 8388608.0F);
}
/// lerp(float(b0), float(b1), t) computed from the biased values: the difference is exact either
/// way, so the result equals augment_math::lerp on the converted bytes bit for bit.
__device__ __forceinline__ float lerp_bytes(std::uint32_t b0, std::uint32_t b1, float t) {
  return __fmaf_rn(t, __fsub_rn(biased_byte(b1), biased_byte(b0)), byte_value(b0));
}

// ---- row pass: raw (halo_h x halo_w) -> rows (halo_h x tile_w)
// -----------------------------------

/// Compile-time radius: each item reads its 4 + 2R inputs with float4 loads once.
template <int R>
__device__ __forceinline__ void row_pass(const float* raw, float* rows, int channels,
                                         const halo_shape& hs, const float* w) {
  constexpr int segments = tile_w / row_segment;
  constexpr int n = row_segment + 2 * R;
  constexpr int vectors = (n + 3) / 4;
  const int items = channels * hs.h * segments;
  for (int i = threadIdx.x; i < items; i += block_threads) {
    const int seg = i % segments;
    const int row = i / segments; // channel * halo_h + halo row
    const float4* src = reinterpret_cast<const float4*>(raw + row * hs.stride + seg * row_segment);
    float v[vectors * 4];
#pragma unroll
    for (int j = 0; j < vectors; ++j) {
      const float4 t = src[j];
      v[4 * j] = t.x;
      v[4 * j + 1] = t.y;
      v[4 * j + 2] = t.z;
      v[4 * j + 3] = t.w;
    }
    float o[row_segment];
#pragma unroll
    for (int q = 0; q < row_segment; ++q) {
      float acc = 0.0F;
#pragma unroll
      for (int k = 0; k <= 2 * R; ++k) acc = am::mac(acc, w[k], v[q + k]);
      o[q] = acc;
    }
    *reinterpret_cast<float4*>(rows + row * tile_w + seg * row_segment) =
        make_float4(o[0], o[1], o[2], o[3]);
  }
}

/// Runtime radius (any --blur): the same sums, read straight from shared memory.
__device__ __forceinline__ void row_pass_any(const float* raw, float* rows, int channels,
                                             const halo_shape& hs, const float* w) {
  constexpr int segments = tile_w / row_segment;
  const int items = channels * hs.h * segments;
  const int taps = 2 * hs.radius + 1;
  for (int i = threadIdx.x; i < items; i += block_threads) {
    const int seg = i % segments;
    const int row = i / segments;
    const float* src = raw + row * hs.stride + seg * row_segment;
    float o[row_segment];
#pragma unroll
    for (int q = 0; q < row_segment; ++q) {
      float acc = 0.0F;
      for (int k = 0; k < taps; ++k) acc = am::mac(acc, w[k], src[q + k]);
      o[q] = acc;
    }
    *reinterpret_cast<float4*>(rows + row * tile_w + seg * row_segment) =
        make_float4(o[0], o[1], o[2], o[3]);
  }
}

// ---- column pass: rows -> column_segment x 4 outputs per item, handed to `store` ----------------

/// `Rows` outputs of 4 adjacent columns from the rows at src, src + Stride, ...: output o is the
/// sum of input row o + k times tap k, from 0 and with k increasing (the order every blur here and
/// the CPU reference use). Both compile-time column passes, generic and fast, are this loop.
template <int Rows, int Taps, int Stride, typename Weights>
__device__ __forceinline__ void column_taps(const float* src, const Weights& w,
                                            float4 (&acc)[Rows]) {
#pragma unroll
  for (int o = 0; o < Rows; ++o) acc[o] = make_float4(0.0F, 0.0F, 0.0F, 0.0F);
#pragma unroll
  for (int j = 0; j < Rows + Taps - 1; ++j) {
    const float4 v = *reinterpret_cast<const float4*>(src + j * Stride);
#pragma unroll
    for (int o = 0; o < Rows; ++o) {
      const int k = j - o;
      if (k >= 0 && k < Taps) {
        acc[o].x = am::mac(acc[o].x, w[k], v.x);
        acc[o].y = am::mac(acc[o].y, w[k], v.y);
        acc[o].z = am::mac(acc[o].z, w[k], v.z);
        acc[o].w = am::mac(acc[o].w, w[k], v.w);
      }
    }
  }
}

/// `store(channel, tile_row, tile_col, float4)` receives 4 horizontally adjacent outputs.
template <int R, typename Store>
__device__ __forceinline__ void column_pass(const float* rows, int channels, const halo_shape& hs,
                                            const float* w, Store&& store) {
  constexpr int groups = tile_w / 4;
  constexpr int segments = tile_h / column_segment;
  const int items = channels * segments * groups;
  for (int i = threadIdx.x; i < items; i += block_threads) {
    const int g = i % groups;
    const int seg = (i / groups) % segments;
    const int c = i / (groups * segments);
    const float* src = rows + (c * hs.h + seg * column_segment) * tile_w + 4 * g;
    float4 acc[column_segment];
    column_taps<column_segment, 2 * R + 1, tile_w>(src, w, acc);
#pragma unroll
    for (int o = 0; o < column_segment; ++o) store(c, seg * column_segment + o, 4 * g, acc[o]);
  }
}

template <typename Store>
__device__ __forceinline__ void column_pass_any(const float* rows, int channels,
                                                const halo_shape& hs, const float* w,
                                                Store&& store) {
  constexpr int groups = tile_w / 4;
  constexpr int segments = tile_h / column_segment;
  const int items = channels * segments * groups;
  const int taps = 2 * hs.radius + 1;
  for (int i = threadIdx.x; i < items; i += block_threads) {
    const int g = i % groups;
    const int seg = (i / groups) % segments;
    const int c = i / (groups * segments);
    const float* src = rows + (c * hs.h + seg * column_segment) * tile_w + 4 * g;
    for (int o = 0; o < column_segment; ++o) {
      float4 acc = make_float4(0.0F, 0.0F, 0.0F, 0.0F);
      for (int k = 0; k < taps; ++k) {
        const float4 v = *reinterpret_cast<const float4*>(src + (o + k) * tile_w);
        acc.x = am::mac(acc.x, w[k], v.x);
        acc.y = am::mac(acc.y, w[k], v.y);
        acc.z = am::mac(acc.z, w[k], v.z);
        acc.w = am::mac(acc.w, w[k], v.w);
      }
      store(c, seg * column_segment + o, 4 * g, acc);
    }
  }
}

/// Row pass then column pass, with the barrier between them.
template <int R, typename Store>
__device__ __forceinline__ void blur_tile(const float* raw, float* rows, int channels,
                                          const halo_shape& hs, const float* w, Store&& store) {
  if constexpr (R >= 0) {
    row_pass<R>(raw, rows, channels, hs, w);
    __syncthreads();
    column_pass<R>(rows, channels, hs, w, store);
  } else {
    row_pass_any(raw, rows, channels, hs, w);
    __syncthreads();
    column_pass_any(rows, channels, hs, w, store);
  }
}

// ---- fast path: 3 channels, radius 3, 32 x 32 tiles, 192 threads --------------------------------
//
// The default shape's blur, shared by the fused kernel and the staged blur so that both sum the
// same values in the same order (the generic passes above do the same sums: from 0, taps in
// increasing order, rows then columns). `raw` holds the halo of every channel, halo column hx at
// raw position hx + 1 so that the tile's own columns are 16-byte aligned; `rows` the row-blurred
// halo rows. Each column-pass thread produces 4 x 4 outputs of one channel.
namespace fast {

inline constexpr int channels = 3;
inline constexpr int radius = 3;
inline constexpr int taps = 2 * radius + 1;
inline constexpr int tw = 32; ///< tile width (outputs)
inline constexpr int th = 32; ///< tile height
inline constexpr int threads = 192;
inline constexpr int halo_w = tw + 2 * radius; // 38
inline constexpr int halo_h = th + 2 * radius; // 38
inline constexpr int raw_stride = 44; ///< floats per raw row (position hx + 1); 11 vectors, odd,
                                      ///< so row_pass's loads of 2 rows miss each other's banks
inline constexpr int raw_plane = halo_h * raw_stride; ///< floats per channel
inline constexpr int rows_plane = halo_h * tw;        ///< floats per channel
inline constexpr int column_rows = 4;                 ///< output rows per column-pass thread
static_assert(channels * (th / column_rows) * (tw / 4) == threads, "one column item per thread");

/// Shared memory per SM at the largest carve-out on the architecture being compiled (the CUDA
/// Programming Guide's table of compute capabilities). Only the device passes read it, through
/// __launch_bounds__ (the fused fast kernel and the staged blur); an architecture not listed gets
/// the smallest value, which caps nothing.
inline constexpr int smem_per_sm_bytes() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000 ||                    \
    __CUDA_ARCH__ == 1030
  return 228 * 1024;
#elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
  return 164 * 1024;
#else
  return 100 * 1024; // sm_86, sm_89, sm_120 and anything unlisted
#endif
}

/// Row pass: raw -> rows for every channel, halo rows FirstRow..37. Output column j reads halo
/// columns j .. j + 6. An item is 8 outputs of one row from 4 vector loads (16 floats, 14 used).
/// Thread t always takes segment t % 4 and every 48th row from t / 4 (the rows of all channels
/// counted together): its segment, its row parity and so its store order stay the same across
/// the (unrolled) iterations, and a row's index is a few adds. The two halves of an item are
/// stored in swapped order on odd rows: rows are 32 floats apart, so without the swap the 8 lanes
/// of a store phase (2 rows x 4 items) would hit 4 bank groups twice.
template <int FirstRow = 0>
__device__ __forceinline__ void row_pass(const float* __restrict__ raw, float* __restrict__ rows,
                                         const float (&w)[taps]) {
  constexpr int segments = tw / 8;
  constexpr int n_rows = halo_h - FirstRow; // per channel
  constexpr int items = channels * n_rows;  // rows of all channels
  constexpr int step = threads / segments;  // 48
  constexpr int passes = (items + step - 1) / step;
  const int t = static_cast<int>(threadIdx.x);
  const int seg = t % segments;
  const int q0 = t / segments;
  // Row q of the pass, counted over the channels' rows FirstRow..37, is raw / rows row
  // q + FirstRow (c + 1) for channel c = q / n_rows: its parity is q's, which is q0's.
  const bool odd = (q0 & 1) != 0;
  const int first = odd ? 4 : 0; // the half stored first: outputs 4..7 on odd rows
  const float* src0 = raw + seg * 8;
  float* dst0 = rows + seg * 8;
#pragma unroll 1
  for (int p = 0; p < passes; ++p) {
    const int q = q0 + p * step;
    if (items % step != 0 && p == passes - 1 && q >= items) break;
    const int row = FirstRow == 0 ? q : q + FirstRow * (q / n_rows + 1);
    const float4* src = reinterpret_cast<const float4*>(src0 + row * raw_stride);
    float v[16];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float4 u = src[j];
      v[4 * j] = u.x;
      v[4 * j + 1] = u.y;
      v[4 * j + 2] = u.z;
      v[4 * j + 3] = u.w;
    }
    float o[8];
#pragma unroll
    for (int k8 = 0; k8 < 8; ++k8) {
      float acc = 0.0F;
#pragma unroll
      for (int k = 0; k < taps; ++k) acc = am::mac(acc, w[k], v[k8 + k + 1]);
      o[k8] = acc;
    }
    const float4 a = make_float4(o[0], o[1], o[2], o[3]);
    const float4 b = make_float4(o[4], o[5], o[6], o[7]);
    float* dst = dst0 + row * tw;
    *reinterpret_cast<float4*>(dst + first) = odd ? b : a;
    *reinterpret_cast<float4*>(dst + (4 - first)) = odd ? a : b;
  }
}

/// Column pass: thread t owns channel t / 64, tile rows 4 (t / 8 % 8) .. + 3, columns 4 (t % 8)
/// .. + 3; `store(channel, tile_row, tile_col, float4)`.
template <typename Store>
__device__ __forceinline__ void column_pass(const float* __restrict__ rows, const float (&w)[taps],
                                            Store&& store) {
  const int t = static_cast<int>(threadIdx.x);
  const int g = t % (tw / 4);
  const int seg = (t / (tw / 4)) % (th / column_rows);
  const int c = t / ((tw / 4) * (th / column_rows));
  const float* src = rows + (c * halo_h + seg * column_rows) * tw + 4 * g;
  float4 acc[column_rows];
  column_taps<column_rows, taps, tw>(src, w, acc);
#pragma unroll
  for (int o = 0; o < column_rows; ++o) store(c, seg * column_rows + o, 4 * g, acc[o]);
}

} // namespace fast

// ---- normalize and typed stores -----------------------------------------------------------------

/// The normalize's offset: (v - mean) * inv_std = v * inv_std + offset.
__device__ __forceinline__ float normalize_offset(float mean, float inv_std) {
  return -am::mul_rn(mean, inv_std);
}

/// (v - mean) * inv_std as one fused multiply-add, v * inv_std + offset (normalize_offset). The CPU
/// reference subtracts, then multiplies: the two differ by rounding only (about 1e-7 on values of
/// order 1, far inside the verification tolerance); staged and fused both use this, so their
/// outputs stay identical.
__device__ __forceinline__ float normalize1(float v, float inv_std, float offset) {
  return __fmaf_rn(v, inv_std, offset);
}
__device__ __forceinline__ float4 normalize4(float4 v, float inv_std, float offset) {
  return make_float4(normalize1(v.x, inv_std, offset), normalize1(v.y, inv_std, offset),
                     normalize1(v.z, inv_std, offset), normalize1(v.w, inv_std, offset));
}

template <typename Out>
__device__ __forceinline__ Out from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__device__ __forceinline__ std::uint32_t bits16(__half h) { return __half_as_ushort(h); }
__device__ __forceinline__ std::uint32_t bits16(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }

/// Stores 4 adjacent values at `p`: one vector store when `vector` (aligned and all in range),
/// else element by element up to `count`. Plain stores: on the H200 the streaming (.cs) hint
/// measured slower for write-once data (see vecadd).
template <typename Out>
__device__ __forceinline__ void store4(Out* p, float4 v, bool vector, int count) {
  if constexpr (sizeof(Out) == 4) {
    if (vector) {
      *reinterpret_cast<float4*>(p) = v;
      return;
    }
  } else {
    if (vector) {
      const Out a = from_float<Out>(v.x);
      const Out b = from_float<Out>(v.y);
      const Out c = from_float<Out>(v.z);
      const Out d = from_float<Out>(v.w);
      uint2 bits;
      bits.x = bits16(a) | (bits16(b) << 16U);
      bits.y = bits16(c) | (bits16(d) << 16U);
      *reinterpret_cast<uint2*>(p) = bits;
      return;
    }
  }
  const float e[4] = {v.x, v.y, v.z, v.w};
  for (int j = 0; j < 4 && j < count; ++j) p[j] = from_float<Out>(e[j]);
}

} // namespace gpubench::cuda::augment_detail

namespace gpubench::cuda::augment_detail {

/// Largest dynamic shared memory a block may opt into on the current device.
int max_dynamic_shared_bytes();

/// Raises `kernel`'s dynamic shared memory limit to `bytes` on the current device, once.
void allow_dynamic_shared_bytes(const void* kernel, int bytes);

/// Grid for a grid-stride loop over `n` items with `threads` per block.
unsigned grid_for(std::size_t n, int threads);

/// Blocks of `kernel` the current device holds at once (all SMs), from the occupancy calculator;
/// cached per kernel, threads, shared bytes and device.
int resident_blocks(const void* kernel, int threads, int dynamic_shared_bytes);

} // namespace gpubench::cuda::augment_detail
