// The generic fused augment kernel: any channel count, blur radius and output size, one block per
// output tile of one image.
//
// 1. Prologue: the rotation products of every halo column and row (cos dx, sin dx, sin dy, cos dy,
//    each rounded once, exactly as augment_math::rotation_source rounds them) and the resize taps
//    of every output index go to shared memory, so the per-pixel inverse map is a few adds.
// 2. Stage: the window of crop pixels the tile can read (the rotated tile's bounding box mapped
//    through the resize) is copied once, coalesced, into shared memory as floats.
// 3. Sample: for every halo pixel (the tile plus the blur radius on each side, reflected at the
//    border), compose rotation and resize into one inverse map and interpolate from the staged
//    window, all channels of a group at once so they share the coordinate work. A sample outside
//    the window (or a window too large to stage, when shrinking a lot) reads the uint8 input.
// 4. Blur the halo tile (rows, then columns) in shared memory, normalize, store with 16-byte
//    stores.
#include "augment_fused.cuh"
#include "gpubench/cuda/error.hpp"

#include <algorithm>
#include <climits>

namespace gpubench::cuda {

namespace {

using namespace augment_detail;

/// Shared memory partitions, in floats from the start (each a multiple of 4 floats, 16 bytes).
struct fused_layout {
  int weights = 0;
  int columns = 0; ///< float2 per halo column: cos dx, sin dx
  int rows = 0;    ///< float2 per halo row: sin dy, cos dy
  int taps = 0;    ///< int2 per output index: i0 | i1 << 16, weight of i1
  int raw = 0;
  int blurred_rows = 0;
  int total = 0;
  __host__ __device__ fused_layout(const halo_shape& hs, int size, int group, bool tabulated) {
    const auto up4 = [](int n) { return (n + 3) / 4 * 4; };
    columns = weights + up4(augment_max_blur);
    rows = columns + up4(2 * hs.w);
    taps = rows + up4(2 * hs.h);
    raw = taps + (tabulated ? up4(2 * size) : 0);
    blurred_rows = raw + group * hs.raw_floats();
    total = blurred_rows + group * hs.row_floats();
  }
  [[nodiscard]] __host__ __device__ int bytes() const { return total * 4; }
};

__device__ __forceinline__ am::resize_tap tap_at(const int2* table, const fused_args& a, int d) {
  if (a.tabulated) {
    const int2 e = table[d];
    return {e.x & 0xFFFF, e.x >> 16, __int_as_float(e.y)};
  }
  return am::resize_source(d, a.scale, a.crop);
}

/// Where one sample's crop pixels come from: the window staged in shared memory (floats, one
/// `box_floats` plane per channel) or, for a sample outside it, the uint8 input planes.
struct crop_source {
  const std::uint8_t* __restrict__ planes; ///< first channel of the group
  std::size_t plane_bytes;
  int width;
  int top;
  int left;
  const float* box;
  int box_floats;
  am::crop_window window; ///< empty when nothing is staged
};

/// The four crop pixels behind resized pixel (xr, yr) and their weights: the composed crop +
/// resize map. Offsets index the staged window when `boxed`, else the input plane.
struct crop_taps {
  int o00;
  int o01;
  int o10;
  int o11;
  float lx;
  float ly;
  bool boxed;
};

__device__ __forceinline__ crop_taps crop_taps_at(const int2* table, const fused_args& a,
                                                  const crop_source& src, int xr, int yr) {
  const am::resize_tap tx = tap_at(table, a, xr);
  const am::resize_tap ty = tap_at(table, a, yr);
  const am::crop_window& w = src.window;
  const bool boxed = tx.i0 >= w.x0 && tx.i1 <= w.x1 && ty.i0 >= w.y0 && ty.i1 <= w.y1;
  int r0 = 0;
  int r1 = 0;
  if (boxed) {
    r0 = (ty.i0 - w.y0) * w.width() - w.x0;
    r1 = (ty.i1 - w.y0) * w.width() - w.x0;
  } else {
    r0 = (src.top + ty.i0) * src.width + src.left;
    r1 = (src.top + ty.i1) * src.width + src.left;
  }
  return {r0 + tx.i0, r0 + tx.i1, r1 + tx.i0, r1 + tx.i1, tx.l1, ty.l1, boxed};
}

/// The resized image's value at the taps in channel c of the group. Both sources give the same
/// bits: the staged floats are the exact byte values, and lerp_bytes equals lerp on them.
__device__ __forceinline__ float resized_value(const crop_source& src, const crop_taps& t, int c) {
  if (t.boxed) {
    const float* b = src.box + c * src.box_floats;
    return am::lerp(am::lerp(b[t.o00], b[t.o01], t.lx), am::lerp(b[t.o10], b[t.o11], t.lx), t.ly);
  }
  const std::uint8_t* plane = src.planes + static_cast<std::size_t>(c) * src.plane_bytes;
  const float upper = lerp_bytes(__ldg(plane + t.o00), __ldg(plane + t.o01), t.lx);
  const float lower = lerp_bytes(__ldg(plane + t.o10), __ldg(plane + t.o11), t.lx);
  return am::lerp(upper, lower, t.ly);
}

/// Copies the window's uint8 pixels of every channel of the group into shared memory as floats:
/// one warp per window row, lanes along the row (coalesced).
__device__ __forceinline__ void stage_window(const crop_source& src, int group, float* box) {
  const am::crop_window& w = src.window;
  const int bw = w.width();
  const int bh = w.height();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  for (int row = static_cast<int>(threadIdx.x) / 32; row < group * bh; row += block_threads / 32) {
    const int c = row / bh;
    const int by = row - c * bh;
    const std::uint8_t* in = src.planes + static_cast<std::size_t>(c) * src.plane_bytes +
                             static_cast<std::size_t>(src.top + w.y0 + by) * src.width + src.left +
                             w.x0;
    float* out = box + c * src.box_floats + by * bw;
    for (int bx = lane; bx < bw; bx += 32) out[bx] = byte_value(__ldg(in + bx));
  }
}

template <augment_interp Interp>
__device__ __forceinline__ void
sample_halo(const fused_args& a, const halo_shape& hs, const float2* columns, const float2* rows,
            const int2* table, const crop_source& src, int group, float* raw) {
  constexpr int patch_w = 8;
  constexpr int patch_h = 4;
  const int patches_x = (hs.w + patch_w - 1) / patch_w;
  const int patches = patches_x * ((hs.h + patch_h - 1) / patch_h);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int raw_floats = hs.raw_floats();
  for (int q = static_cast<int>(threadIdx.x) / 32; q < patches; q += block_threads / 32) {
    const int py = q / patches_x;
    const int hx = (q - py * patches_x) * patch_w + lane % patch_w;
    const int hy = py * patch_h + lane / patch_w;
    if (hx >= hs.w || hy >= hs.h) continue;
    // Rotation source, rounded as augment_math::rotation_source rounds it.
    const float2 cx = columns[hx];
    const float2 cy = rows[hy];
    const float xs = am::add_rn(am::sub_rn(cx.x, cy.x), a.centre);
    const float ys = am::add_rn(am::add_rn(cx.y, cy.y), a.centre);
    float* dst = raw + hy * hs.stride + hx;
    const auto n = static_cast<unsigned>(a.size);
    if constexpr (Interp == augment_interp::nearest) {
      const int xr = am::round_to_int(xs);
      const int yr = am::round_to_int(ys);
      if (static_cast<unsigned>(xr) < n && static_cast<unsigned>(yr) < n) {
        const crop_taps t = crop_taps_at(table, a, src, xr, yr);
        for (int c = 0; c < group; ++c) dst[c * raw_floats] = resized_value(src, t, c);
      } else {
        for (int c = 0; c < group; ++c) dst[c * raw_floats] = 0.0F;
      }
    } else {
      const int x0 = am::floor_to_int(xs);
      const int y0 = am::floor_to_int(ys);
      const float fx = am::sub_rn(xs, static_cast<float>(x0));
      const float fy = am::sub_rn(ys, static_cast<float>(y0));
      crop_taps t[4];
      bool inside[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int xr = x0 + (k & 1);
        const int yr = y0 + (k >> 1);
        inside[k] = static_cast<unsigned>(xr) < n && static_cast<unsigned>(yr) < n;
        t[k] = crop_taps_at(table, a, src, inside[k] ? xr : 0, inside[k] ? yr : 0);
      }
      for (int c = 0; c < group; ++c) {
        float v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = inside[k] ? resized_value(src, t[k], c) : 0.0F;
        dst[c * raw_floats] = am::lerp(am::lerp(v[0], v[1], fx), am::lerp(v[2], v[3], fx), fy);
      }
    }
  }
}

template <int R, augment_interp Interp, typename Out>
__global__ void __launch_bounds__(block_threads)
    augment_fused_kernel(const __grid_constant__ fused_args a) {
  extern __shared__ float4 shared4[];
  float* shared = reinterpret_cast<float*>(shared4);
  const int radius = R >= 0 ? R : a.radius;
  const halo_shape hs(radius);
  const fused_layout layout(hs, a.size, a.channel_group, a.tabulated);
  float* weights = shared + layout.weights;
  auto* columns = reinterpret_cast<float2*>(shared + layout.columns);
  auto* rows = reinterpret_cast<float2*>(shared + layout.rows);
  auto* table = reinterpret_cast<int2*>(shared + layout.taps);
  float* raw = shared + layout.raw;
  float* blurred_rows = shared + layout.blurred_rows;

  const int image = static_cast<int>(blockIdx.x) / a.tiles_per_image;
  const int tile = static_cast<int>(blockIdx.x) - image * a.tiles_per_image;
  const int tile_y = tile / a.tiles_x;
  const int x0 = (tile - tile_y * a.tiles_x) * tile_w;
  const int y0 = tile_y * tile_h;
  const augment_sample& sp = a.samples[image];
  const int top = sp.top;
  const int left = sp.left;
  const float cos_a = sp.cos_a;
  const float sin_a = sp.sin_a;

  const int t = static_cast<int>(threadIdx.x);
  for (int i = t; i <= 2 * radius; i += block_threads) weights[i] = sp.weights[i];
  for (int i = t; i < hs.w; i += block_threads) {
    const float d =
        am::sub_rn(static_cast<float>(halo_coordinate(x0, i, radius, a.size)), a.centre);
    columns[i] = make_float2(am::mul_rn(cos_a, d), am::mul_rn(sin_a, d));
  }
  for (int i = t; i < hs.h; i += block_threads) {
    const float d =
        am::sub_rn(static_cast<float>(halo_coordinate(y0, i, radius, a.size)), a.centre);
    rows[i] = make_float2(am::mul_rn(sin_a, d), am::mul_rn(cos_a, d));
  }
  if (a.tabulated)
    for (int i = t; i < a.size; i += block_threads) {
      const am::resize_tap tap = am::resize_source(i, a.scale, a.crop);
      table[i] = make_int2(tap.i0 | (tap.i1 << 16), __float_as_int(tap.l1));
    }
  __syncthreads();

  const blur_weights<R> w(weights); // registers when the radius is known at compile time

  const std::size_t plane_bytes =
      static_cast<std::size_t>(a.height) * static_cast<std::size_t>(a.width);
  const std::size_t out_plane = static_cast<std::size_t>(a.size) * static_cast<std::size_t>(a.size);
  const std::uint8_t* image_in = a.input + static_cast<std::size_t>(image) *
                                               static_cast<std::size_t>(a.channels) * plane_bytes;
  Out* image_out = static_cast<Out*>(a.out) + static_cast<std::size_t>(image) *
                                                  static_cast<std::size_t>(a.channels) * out_plane;
  const bool vector_rows = a.size % 4 == 0;

  // The crop pixels this tile can read, staged in shared memory when they fit in the space the
  // blurred rows use later (they are dead by then). Samples outside it read global memory.
  am::crop_window window = am::tile_source_window(
      max(0, x0 - radius), min(a.size - 1, x0 + tile_w - 1 + radius), max(0, y0 - radius),
      min(a.size - 1, y0 + tile_h - 1 + radius), a.size, a.crop, a.scale, cos_a, sin_a);
  const int box_floats = hs.row_floats();
  if (!window.empty() && window.width() * window.height() > box_floats) window = am::crop_window{};
  const bool staged_window = !window.empty();

  for (int c0 = 0; c0 < a.channels; c0 += a.channel_group) {
    const int group = min(a.channel_group, a.channels - c0);
    const crop_source src{image_in + static_cast<std::size_t>(c0) * plane_bytes,
                          plane_bytes,
                          a.width,
                          top,
                          left,
                          blurred_rows,
                          box_floats,
                          window};
    if (staged_window) {
      stage_window(src, group, blurred_rows);
      __syncthreads();
    }
    sample_halo<Interp>(a, hs, columns, rows, table, src, group, raw);
    __syncthreads();
    blur_tile<R>(raw, blurred_rows, group, hs, w.get(), [&](int c, int ty, int tx, float4 v) {
      const int y = y0 + ty;
      const int x = x0 + tx;
      if (y >= a.size || x >= a.size) return;
      const int ch = c0 + c;
      v = normalize4(v, a.inv_std[ch], normalize_offset(a.mean[ch], a.inv_std[ch]));
      Out* p = image_out + static_cast<std::size_t>(ch) * out_plane +
               static_cast<std::size_t>(y) * static_cast<std::size_t>(a.size) +
               static_cast<std::size_t>(x);
      store4(p, v, vector_rows && x + 3 < a.size, a.size - x);
    });
    // The next group stages its window where this group's column pass reads.
    if (c0 + a.channel_group < a.channels) __syncthreads();
  }
}

template <int R, augment_interp Interp>
fused_kernel pick_out(dtype out) {
  switch (out) {
  case dtype::f16: return augment_fused_kernel<R, Interp, __half>;
  case dtype::bf16: return augment_fused_kernel<R, Interp, __nv_bfloat16>;
  case dtype::f32:
  case dtype::f64: break;
  }
  return augment_fused_kernel<R, Interp, float>;
}

template <int R>
fused_kernel pick_interp(augment_interp interp, dtype out) {
  return interp == augment_interp::nearest ? pick_out<R, augment_interp::nearest>(out)
                                           : pick_out<R, augment_interp::bilinear>(out);
}

} // namespace

void augment_detail::launch_fused_generic(fused_args a, const augment_shape& shape,
                                          cudaStream_t s) {
  const halo_shape hs(shape.radius);
  const int limit = max_dynamic_shared_bytes();
  a.channel_group = std::min(shape.channels, max_channel_group);
  while (a.channel_group > 1 &&
         fused_layout(hs, a.size, a.channel_group, a.tabulated).bytes() > limit)
    --a.channel_group;
  const int bytes = fused_layout(hs, a.size, a.channel_group, a.tabulated).bytes();
  if (bytes > limit)
    throw cuda_error(cudaErrorInvalidValue,
                     "augment_fused: the blur tile needs more shared memory than the device has");
  const long long blocks = static_cast<long long>(shape.batch) * a.tiles_per_image;
  if (blocks > INT_MAX)
    throw cuda_error(cudaErrorInvalidValue, "augment_fused: the batch needs too many blocks");
  const fused_kernel kernel = shape.radius == 3 ? pick_interp<3>(shape.interp, shape.out)
                                                : pick_interp<-1>(shape.interp, shape.out);
  allow_dynamic_shared_bytes(reinterpret_cast<const void*>(kernel), bytes);
  kernel<<<static_cast<unsigned>(blocks), block_threads, static_cast<std::size_t>(bytes), s>>>(a);
  GPUBENCH_CHECK_LAUNCH("augment_fused");
}

} // namespace gpubench::cuda
