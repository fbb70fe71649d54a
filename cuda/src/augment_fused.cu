// The fused augment kernel: one launch for the whole batch, one block per output tile of one image.
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
#include "augment_device.cuh"
#include "gpubench/cuda/error.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace gpubench::cuda {

namespace {

using namespace augment_detail;

/// Output sides up to this tabulate their resize taps in shared memory; larger ones compute them.
constexpr int resize_table_max = 1024;

struct fused_args {
  const std::uint8_t* __restrict__ input;
  const augment_sample* __restrict__ samples;
  void* __restrict__ out;
  int channels;
  int height;
  int width;
  int crop;
  int size;
  int radius;
  int tiles_x;
  int tiles_per_image;
  int channel_group;
  bool tabulated;
  float scale;
  float centre;
  float mean[augment_max_channels];
  float inv_std[augment_max_channels];
};

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

  // Weights in registers when the radius is known at compile time.
  [[maybe_unused]] float w[R >= 0 ? 2 * R + 1 : 1];
  const float* wp = weights;
  if constexpr (R >= 0) {
#pragma unroll
    for (int k = 0; k <= 2 * R; ++k) w[k] = weights[k];
    wp = w;
  }

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
    blur_tile<R>(raw, blurred_rows, group, hs, wp, [&](int c, int ty, int tx, float4 v) {
      const int y = y0 + ty;
      const int x = x0 + tx;
      if (y >= a.size || x >= a.size) return;
      const int ch = c0 + c;
      const float m = a.mean[ch];
      const float s = a.inv_std[ch];
      v.x = am::mul_rn(am::sub_rn(v.x, m), s);
      v.y = am::mul_rn(am::sub_rn(v.y, m), s);
      v.z = am::mul_rn(am::sub_rn(v.z, m), s);
      v.w = am::mul_rn(am::sub_rn(v.w, m), s);
      Out* p = image_out + static_cast<std::size_t>(ch) * out_plane +
               static_cast<std::size_t>(y) * static_cast<std::size_t>(a.size) +
               static_cast<std::size_t>(x);
      store4(p, v, vector_rows && x + 3 < a.size, a.size - x);
    });
    // The next group stages its window where this group's column pass reads.
    if (c0 + a.channel_group < a.channels) __syncthreads();
  }
}

using fused_kernel = void (*)(fused_args);

// ---- fast path: 3 channels, radius 3, output side a multiple of 32, input width a multiple of 4
// --
//
// Same stages as above with everything that does not depend on the pixel hoisted out of the
// sample loop: the resize taps of the resized rows and columns the tile can reach are tabulated
// as offsets into the staged window (one 16-byte shared load per axis per sample), the window is
// staged with 4-byte loads, the channel planes sit at compile-time strides, and the blur runs on
// 32 x 32 tiles (fast:: in augment_device.cuh) small enough for 6 blocks per SM.
namespace fastk {

constexpr int tap_capacity = 64; ///< tabulated resized rows or columns (the 38-pixel halo at any
                                 ///< angle reaches at most ~58)
constexpr int box_words =
    fast::channels * fast::rows_plane; ///< staged window pixels (aliases rows)

/// The tile's reach: tabulated resized ranges and the staged window's geometry.
struct reach {
  int rx0; ///< first tabulated resized column
  int nx;  ///< tabulated columns (0: nothing staged, every sample reads global memory)
  int ry0;
  int ny;
  int wy0;      ///< first crop row of the window
  int bh;       ///< window rows
  int bws;      ///< floats per window row (multiple of 4)
  int gx;       ///< input column of the window's first float (4-byte aligned)
  int x_origin; ///< box column = crop column + x_origin
};

__device__ __forceinline__ reach tile_reach(const fused_args& a, int x0, int y0, float cos_a,
                                            float sin_a, int left) {
  constexpr int r = fast::radius;
  const int xa = max(0, x0 - r);
  const int xb = min(a.size - 1, x0 + fast::tw - 1 + r);
  const int ya = max(0, y0 - r);
  const int yb = min(a.size - 1, y0 + fast::th - 1 + r);
  const float c = a.centre;
  const am::point2 p00 = am::rotation_source(xa, ya, c, c, cos_a, sin_a);
  const am::point2 p01 = am::rotation_source(xb, ya, c, c, cos_a, sin_a);
  const am::point2 p10 = am::rotation_source(xa, yb, c, c, cos_a, sin_a);
  const am::point2 p11 = am::rotation_source(xb, yb, c, c, cos_a, sin_a);
  const auto bounded = [](float v) { return fminf(fmaxf(v, -1e7F), 1e7F); };
  const int rx0 =
      max(0, am::floor_to_int(bounded(fminf(fminf(p00.x, p01.x), fminf(p10.x, p11.x)))) - 1);
  const int rx1 = min(
      a.size - 1, am::floor_to_int(bounded(fmaxf(fmaxf(p00.x, p01.x), fmaxf(p10.x, p11.x)))) + 2);
  const int ry0 =
      max(0, am::floor_to_int(bounded(fminf(fminf(p00.y, p01.y), fminf(p10.y, p11.y)))) - 1);
  const int ry1 = min(
      a.size - 1, am::floor_to_int(bounded(fmaxf(fmaxf(p00.y, p01.y), fmaxf(p10.y, p11.y)))) + 2);
  reach e{};
  if (rx0 > rx1 || ry0 > ry1) return e;
  // Resize taps are monotonic in the output index: the range's end taps bound the window.
  const int wx0 = am::resize_source(rx0, a.scale, a.crop).i0;
  const int wx1 = am::resize_source(rx1, a.scale, a.crop).i1;
  const int wy0 = am::resize_source(ry0, a.scale, a.crop).i0;
  const int wy1 = am::resize_source(ry1, a.scale, a.crop).i1;
  const int gx = (left + wx0) & ~3;
  const int bws = (left + wx1 + 1 - gx + 3) & ~3;
  const int bh = wy1 - wy0 + 1;
  if (rx1 - rx0 + 1 > tap_capacity || ry1 - ry0 + 1 > tap_capacity || bws * bh > box_words)
    return e;
  e.rx0 = rx0;
  e.nx = rx1 - rx0 + 1;
  e.ry0 = ry0;
  e.ny = ry1 - ry0 + 1;
  e.wy0 = wy0;
  e.bh = bh;
  e.bws = bws;
  e.gx = gx;
  e.x_origin = left - gx;
  return e;
}

template <augment_interp Interp, typename Out>
__global__ void __launch_bounds__(fast::threads, 6)
    augment_fused_fast(const __grid_constant__ fused_args a) {
  using namespace fast;
  __shared__ __align__(16) float raw[channels * raw_plane];
  __shared__ __align__(16) float rows[channels * rows_plane]; // the staged window first
  auto* box = reinterpret_cast<std::uint32_t*>(rows);
  __shared__ int4 tap_x[tap_capacity];
  __shared__ int4 tap_y[tap_capacity];
  __shared__ float2 row_terms[halo_h];
  __shared__ reach shared_reach;

  const int image = static_cast<int>(blockIdx.x) / a.tiles_per_image;
  const int tile = static_cast<int>(blockIdx.x) - image * a.tiles_per_image;
  const int tile_y = tile / a.tiles_x;
  const int x0 = (tile - tile_y * a.tiles_x) * tw;
  const int y0 = tile_y * th;
  const augment_sample& sp = a.samples[image];
  const float cos_a = sp.cos_a;
  const float sin_a = sp.sin_a;
  const int top = sp.top;
  const int left = sp.left;
  const int t = static_cast<int>(threadIdx.x);

  if (t < 32) {
    const reach e = tile_reach(a, x0, y0, cos_a, sin_a, left);
    if (t == 0) shared_reach = e;
  } else if (t - 32 < halo_h) {
    const int i = t - 32;
    const float d =
        am::sub_rn(static_cast<float>(halo_coordinate(y0, i, radius, a.size)), a.centre);
    row_terms[i] = make_float2(am::mul_rn(sin_a, d), am::mul_rn(cos_a, d));
  }
  float w[taps];
#pragma unroll
  for (int k = 0; k < taps; ++k) w[k] = sp.weights[k];
  __syncthreads();
  const reach e = shared_reach;

  const std::size_t plane_bytes =
      static_cast<std::size_t>(a.height) * static_cast<std::size_t>(a.width);
  const std::uint8_t* image_in = a.input + static_cast<std::size_t>(image) * channels * plane_bytes;

  // Tap tables and the window (4 bytes per load, 4 floats per store).
  for (int i = t; i < e.nx; i += threads) {
    const am::resize_tap tap = am::resize_source(e.rx0 + i, a.scale, a.crop);
    tap_x[i] = make_int4(tap.i0 + e.x_origin, tap.i1 + e.x_origin, __float_as_int(tap.l1), 0);
  }
  for (int i = t; i < e.ny; i += threads) {
    const am::resize_tap tap = am::resize_source(e.ry0 + i, a.scale, a.crop);
    tap_y[i] =
        make_int4((tap.i0 - e.wy0) * e.bws, (tap.i1 - e.wy0) * e.bws, __float_as_int(tap.l1), 0);
  }
  {
    // Window pixel = one word, byte c = channel c: 4 bytes of each channel per load.
    const int words = e.bws / 4;
    const int lane = t % 8;
    const std::uint8_t* plane = image_in + static_cast<std::size_t>(top + e.wy0) * a.width + e.gx;
    for (int by = t / 8; by < e.bh; by += threads / 8) {
      const auto* in =
          reinterpret_cast<const std::uint32_t*>(plane + static_cast<std::size_t>(by) * a.width);
      uint4* out = reinterpret_cast<uint4*>(box + by * e.bws);
      for (int k = lane; k < words; k += 8) {
        const std::uint32_t r = __ldg(in + k);
        const std::uint32_t g = __ldg(in + plane_bytes / 4 + k);
        const std::uint32_t b = __ldg(in + plane_bytes / 2 + k);
        const std::uint32_t rg_lo = __byte_perm(r, g, 0x5140);
        const std::uint32_t rg_hi = __byte_perm(r, g, 0x7362);
        out[k] = make_uint4(__byte_perm(rg_lo, b, 0x0410), __byte_perm(rg_lo, b, 0x0532),
                            __byte_perm(rg_hi, b, 0x0610), __byte_perm(rg_hi, b, 0x0732));
      }
    }
  }
  __syncthreads();

  // Sample the halo: thread t owns halo column t % 38 and every 5th halo row from t / 38.
  const auto n = static_cast<unsigned>(a.size);
  // All channels of resized pixel (xr, yr), inside the output: from the window when tabulated,
  // else from the uint8 input (same bits: lerp_bytes equals lerp on the converted bytes).
  const auto resized = [&](int xr, int yr, float(&v)[channels]) {
    const unsigned jx = static_cast<unsigned>(xr - e.rx0);
    const unsigned jy = static_cast<unsigned>(yr - e.ry0);
    if (jx < static_cast<unsigned>(e.nx) && jy < static_cast<unsigned>(e.ny)) {
      const int4 tx = tap_x[jx];
      const int4 ty = tap_y[jy];
      const float lx = __int_as_float(tx.z);
      const float ly = __int_as_float(ty.z);
      const int o00 = ty.x + tx.x;
      const int o01 = ty.x + tx.y;
      const int o10 = ty.y + tx.x;
      const int o11 = ty.y + tx.y;
      const std::uint32_t w00 = box[o00];
      const std::uint32_t w01 = box[o01];
      const std::uint32_t w10 = box[o10];
      const std::uint32_t w11 = box[o11];
#pragma unroll
      for (int c = 0; c < channels; ++c) {
        // Byte c of each word as 2^23 + byte (exact); lerp_bytes' arithmetic on them.
        const auto sel = static_cast<std::uint32_t>(0x7440 + c);
        const auto biased = [&](std::uint32_t word) {
          return __uint_as_float(__byte_perm(word, 0x4B000000U, sel));
        };
        const auto lerp_biased = [](float b0, float b1, float t) {
          return __fmaf_rn(t, __fsub_rn(b1, b0), __fsub_rn(b0, 8388608.0F));
        };
        v[c] = am::lerp(lerp_biased(biased(w00), biased(w01), lx),
                        lerp_biased(biased(w10), biased(w11), lx), ly);
      }
    } else {
      const am::resize_tap tx = am::resize_source(xr, a.scale, a.crop);
      const am::resize_tap ty = am::resize_source(yr, a.scale, a.crop);
      const int r0 = (top + ty.i0) * a.width + left;
      const int r1 = (top + ty.i1) * a.width + left;
#pragma unroll
      for (int c = 0; c < channels; ++c) {
        const std::uint8_t* plane = image_in + static_cast<std::size_t>(c) * plane_bytes;
        const float upper = lerp_bytes(__ldg(plane + r0 + tx.i0), __ldg(plane + r0 + tx.i1), tx.l1);
        const float lower = lerp_bytes(__ldg(plane + r1 + tx.i0), __ldg(plane + r1 + tx.i1), tx.l1);
        v[c] = am::lerp(upper, lower, ty.l1);
      }
    }
  };
  constexpr int row_step = threads / halo_w; // 5
  if (t < row_step * halo_w) {
    const int hx = t % halo_w;
    const int hy0 = t / halo_w;
    const float dx =
        am::sub_rn(static_cast<float>(halo_coordinate(x0, hx, radius, a.size)), a.centre);
    const float cdx = am::mul_rn(cos_a, dx);
    const float sdx = am::mul_rn(sin_a, dx);
    for (int hy = hy0; hy < halo_h; hy += row_step) {
      const float2 rt = row_terms[hy];
      const float xs = am::add_rn(am::sub_rn(cdx, rt.x), a.centre);
      const float ys = am::add_rn(am::add_rn(sdx, rt.y), a.centre);
      float* dst = raw + hy * raw_stride + hx + 1;
      float v[channels];
      if constexpr (Interp == augment_interp::nearest) {
        const int xr = am::round_to_int(xs);
        const int yr = am::round_to_int(ys);
        if (static_cast<unsigned>(xr) < n && static_cast<unsigned>(yr) < n) {
          resized(xr, yr, v);
        } else {
#pragma unroll
          for (int c = 0; c < channels; ++c) v[c] = 0.0F;
        }
      } else {
        const int xf = am::floor_to_int(xs);
        const int yf = am::floor_to_int(ys);
        const float fx = am::sub_rn(xs, static_cast<float>(xf));
        const float fy = am::sub_rn(ys, static_cast<float>(yf));
        float q[4][channels];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int xr = xf + (k & 1);
          const int yr = yf + (k >> 1);
          if (static_cast<unsigned>(xr) < n && static_cast<unsigned>(yr) < n) {
            resized(xr, yr, q[k]);
          } else {
#pragma unroll
            for (int c = 0; c < channels; ++c) q[k][c] = 0.0F;
          }
        }
#pragma unroll
        for (int c = 0; c < channels; ++c)
          v[c] = am::lerp(am::lerp(q[0][c], q[1][c], fx), am::lerp(q[2][c], q[3][c], fx), fy);
      }
#pragma unroll
      for (int c = 0; c < channels; ++c) dst[c * raw_plane] = v[c];
    }
  }
  __syncthreads();
  row_pass(raw, rows, w);
  __syncthreads();

  const std::size_t out_plane = static_cast<std::size_t>(a.size) * static_cast<std::size_t>(a.size);
  Out* image_out =
      static_cast<Out*>(a.out) + static_cast<std::size_t>(image) * channels * out_plane;
  column_pass(rows, w, [&](int c, int ty, int tx, float4 v) {
    const float m = a.mean[c];
    const float s = a.inv_std[c];
    v.x = am::mul_rn(am::sub_rn(v.x, m), s);
    v.y = am::mul_rn(am::sub_rn(v.y, m), s);
    v.z = am::mul_rn(am::sub_rn(v.z, m), s);
    v.w = am::mul_rn(am::sub_rn(v.w, m), s);
    Out* p = image_out + static_cast<std::size_t>(c) * out_plane +
             static_cast<std::size_t>((y0 + ty) * a.size + x0 + tx);
    store4(p, v, true, 4);
  });
}

template <augment_interp Interp>
fused_kernel pick_out_fast(dtype out) {
  switch (out) {
  case dtype::f16: return augment_fused_fast<Interp, __half>;
  case dtype::bf16: return augment_fused_fast<Interp, __nv_bfloat16>;
  case dtype::f32:
  case dtype::f64: break;
  }
  return augment_fused_fast<Interp, float>;
}

} // namespace fastk

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

void launch_augment_fused(const augment_shape& shape, const std::uint8_t* input,
                          const augment_sample* samples, void* out, cudaStream_t s) {
  if (shape.batch == 0) return;
  if (shape.out == dtype::f64) throw std::invalid_argument("augment: f64 output is not offered");
  fused_args a{};
  a.input = input;
  a.samples = samples;
  a.out = out;
  a.channels = shape.channels;
  a.height = shape.height;
  a.width = shape.width;
  a.crop = shape.crop;
  a.size = shape.resize;
  a.radius = shape.radius;
  a.tiles_x = (shape.resize + tile_w - 1) / tile_w;
  a.tiles_per_image = a.tiles_x * ((shape.resize + tile_h - 1) / tile_h);
  a.tabulated = shape.resize <= resize_table_max;
  a.scale = shape.scale;
  a.centre = am::centre(shape.resize);
  for (int c = 0; c < augment_max_channels; ++c) {
    a.mean[c] = shape.mean[c];
    a.inv_std[c] = shape.inv_std[c];
  }
  if (shape.channels == fast::channels && shape.radius == fast::radius &&
      shape.resize % fast::tw == 0 && shape.width % 4 == 0) {
    a.tiles_x = shape.resize / fast::tw;
    a.tiles_per_image = a.tiles_x * (shape.resize / fast::th);
    const long long blocks = static_cast<long long>(shape.batch) * a.tiles_per_image;
    if (blocks > INT_MAX)
      throw cuda_error(cudaErrorInvalidValue, "augment_fused: the batch needs too many blocks");
    const fused_kernel kernel = shape.interp == augment_interp::nearest
                                    ? fastk::pick_out_fast<augment_interp::nearest>(shape.out)
                                    : fastk::pick_out_fast<augment_interp::bilinear>(shape.out);
    kernel<<<static_cast<unsigned>(blocks), fast::threads, 0, s>>>(a);
    GPUBENCH_CHECK_LAUNCH("augment_fused");
    return;
  }
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
