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
  /// 0x4B000000, the bits of 2^23 (see biased_channel). A parameter rather than a literal: as a
  /// literal ptxas puts it in PRMT's one immediate slot and rebuilds the byte selectors in
  /// registers in every iteration of the sample loop, a dozen extra moves per sample.
  std::uint32_t float_bias;
  int strip;            ///< fast kernel: tiles per block, down one tile column
  int long_columns;     ///< fast kernel: columns run in strips; the later ones one tile per block
  int tiles_y;          ///< fast kernel: tile rows
  int per_column;       ///< fast kernel: strips per column, tiles_y / strip
  float inv_per_column; ///< fast kernel: 1 / per_column, 1 / tiles_y, 1 / tiles_x (div_small)
  float inv_tiles_y;
  float inv_tiles_x;
  int first_image; ///< fast kernel: image of the launch's first column (launches go in chunks)
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

using fused_kernel = void (*)(fused_args);

// ---- fast path: 3 channels, radius 3, output side a multiple of 32, input width a multiple of 4
//
// Same result as the generic kernel, organised around what the default shape costs: sampling the
// rotated halo (1444 pixels for a 32 x 32 tile, 3 channels each) and the blur. Everything that
// does not depend on the pixel is tabulated in shared memory once per tile: the resize taps of
// the resized rows and columns the tile can reach, as offsets into the staged crop window, and
// the rotation products of the halo rows. How the window is staged depends on the interpolation:
// - nearest reads one resized pixel per halo pixel, 4 crop pixels per channel: the window is
//   staged as one word per pixel (a byte per channel, so one load serves all 3 channels) where
//   the row-blurred halo goes later; ~35 KB of shared memory, 6 blocks per SM.
// - bilinear reads 4 resized pixels per halo pixel, 16 crop pixels per channel. The resize is
//   separable and its horizontal half does not depend on the output row, so for every crop row of
//   the window and every reachable resized column the horizontal lerp is computed once per tile
//   ("h table", where the row-blurred halo goes later); a resized pixel is then one vertical lerp
//   of two entries. The window is staged where the halo goes later; ~43 KB, 5 blocks per SM.
// Both compute the resize with the same operations in the same order as augment_math, so the bits
// equal the generic kernel's and the staged path's. The blur runs on 32 x 32 tiles (fast:: in
// augment_device.cuh). A block handles a strip of tiles down one tile column (strip_length);
// with nearest, each tile after the first samples only the 32 halo rows it does not share with
// the tile above.
namespace fastk {

constexpr int tap_capacity = 64; ///< tabulated resized rows or columns (the 38-pixel halo at any
                                 ///< angle reaches at most ~58)
/// Floats per channel of the h table: at 45 degrees the tile reaches 58 resized columns and,
/// upsampling 2x, 31 crop rows (1798 entries). Larger reaches use the generic sampling.
constexpr int h_plane = 1856;

/// Shared memory of one variant: `rows` holds the staged window (nearest) or the h table
/// (bilinear) before the row-blurred halo; `raw` holds the window (bilinear) before the halo.
template <bool HTable>
struct smem_plan {
  static constexpr int rows_floats =
      HTable ? fast::channels * h_plane : fast::channels * fast::rows_plane;
  /// Window capacity in pixels (words).
  static constexpr int window =
      HTable ? fast::channels * fast::raw_plane : fast::channels * fast::rows_plane;
  static constexpr int blocks_per_sm = HTable ? 5 : 6;
};

/// The tile's reach: tabulated resized ranges and the staged window's geometry.
struct reach {
  int rx0; ///< first tabulated resized column (= h table column 0)
  int nx;  ///< tabulated columns (0: nothing staged, every sample reads global memory)
  int ry0;
  int ny;
  int wy0;      ///< first crop row of the window (= h table row 0)
  int bh;       ///< window rows
  int bws;      ///< window row pitch in pixels (16 mod 32: rows fall on different banks)
  int bwl;      ///< window pixels loaded per row (multiple of 4)
  int gx;       ///< input column of the window's first pixel (4-byte aligned)
  int x_origin; ///< window column = crop column + x_origin
};

template <bool HTable>
__device__ __forceinline__ reach tile_reach(const fused_args& a, int x0, int y0, float cos_a,
                                            float sin_a, int left) {
  constexpr int r = fast::radius;
  const int xa = max(0, x0 - r);
  const int xb = min(a.size - 1, x0 + fast::tw - 1 + r);
  const int ya = max(0, y0 - r);
  const int yb = min(a.size - 1, y0 + fast::th - 1 + r);
  const am::resized_range rr = am::tile_resized_reach(xa, xb, ya, yb, a.size, cos_a, sin_a);
  reach e{};
  if (rr.empty()) return e;
  const am::crop_window cw = am::source_window(rr, a.scale, a.crop);
  const int gx = (left + cw.x0) & ~3;
  const int bwl = (left + cw.x1 + 1 - gx + 3) & ~3;
  // A pitch of 16 mod 32 words puts the next window row on the other half of the banks: the
  // sample loop's loads follow a rotated line across rows, and a pitch near a multiple of 32
  // made ~1.9 wavefronts per load where this makes ~1.3 (counted over random tiles and angles).
  const int bws = bwl + (48 - bwl % 32) % 32;
  const int nx = rr.x1 - rr.x0 + 1;
  const int ny = rr.y1 - rr.y0 + 1;
  if (nx > tap_capacity || ny > tap_capacity || bws * cw.height() > smem_plan<HTable>::window ||
      (HTable && nx * cw.height() > h_plane))
    return e;
  e.rx0 = rr.x0;
  e.nx = nx;
  e.ry0 = rr.y0;
  e.ny = ny;
  e.wy0 = cw.y0;
  e.bh = cw.height();
  e.bws = bws;
  e.bwl = bwl;
  e.gx = gx;
  e.x_origin = left - gx;
  return e;
}

/// n / d for 0 <= n < 2^21 and d >= 1, given inv_d = 1 / d rounded, through the float reciprocal:
/// exact there, since the rounding error, about (n / d) 2^-22, stays below the 1 / (2 d) that
/// separates (n + 0.5) / d from an integer. A few instructions instead of a division's twenty.
__device__ __forceinline__ int div_by_reciprocal(int n, float inv_d) {
  return static_cast<int>((static_cast<float>(n) + 0.5F) * inv_d);
}

/// n / d for any n >= 0: div_by_reciprocal below 2^21, an integer division above. For the block's
/// place in the grid.
__device__ __forceinline__ int div_small(int n, int d, float inv_d) {
  return n < (1 << 21) ? div_by_reciprocal(n, inv_d) : n / d;
}

/// Byte C of `word` as the float 2^23 + byte (exact); `bias` holds float_bias.
template <int C>
__device__ __forceinline__ float biased_channel(std::uint32_t word, std::uint32_t bias) {
  return __uint_as_float(__byte_perm(word, bias, 0x7440 + C));
}

/// lerp_bytes on biased values: the horizontal half of the resize, bit for bit.
__device__ __forceinline__ float lerp_biased(float b0, float b1, float t) {
  return __fmaf_rn(t, __fsub_rn(b1, b0), __fsub_rn(b0, 8388608.0F));
}

/// Channel C of a resized pixel from its 4 window words: augment_math's resize, bit for bit.
template <int C>
__device__ __forceinline__ float resize_word(std::uint32_t w00, std::uint32_t w01,
                                             std::uint32_t w10, std::uint32_t w11, float lx,
                                             float ly, std::uint32_t bias) {
  return am::lerp(lerp_biased(biased_channel<C>(w00, bias), biased_channel<C>(w01, bias), lx),
                  lerp_biased(biased_channel<C>(w10, bias), biased_channel<C>(w11, bias), lx), ly);
}

/// The resize when every weight is a multiple of 1/4 (no resize, or an exact 2x up- or
/// downsample): the window words hold the 3 channels in 10-bit lanes, so the two horizontal lerps
/// are 2 integer multiply-adds for all channels at once (4 x 255 fits 10 bits); the vertical one
/// needs 12 bits a lane and runs on two words (R and B 20 bits apart, G alone). The result is
/// 16 x the resized value, an integer, and the float lerps of augment_math are exact on these
/// values (products of bytes and quarters, 12 significant bits), so v / 16 equals them bit for
/// bit. It goes to float by placing it in the low mantissa of 2^19 (whose ulp is 1/16) and
/// subtracting 2^19.
__device__ __forceinline__ void quarter_resize(std::uint32_t w00, std::uint32_t w01,
                                               std::uint32_t w10, std::uint32_t w11, int wx0,
                                               int wx1, int wy0, int wy1, float (&v)[3]) {
  constexpr std::uint32_t rb = 0x3FF003FFU; // lanes 0 and 2
  constexpr std::uint32_t g = 0x000FFC00U;  // lane 1
  const auto x0 = static_cast<std::uint32_t>(wx0);
  const auto x1 = static_cast<std::uint32_t>(wx1);
  const auto y0 = static_cast<std::uint32_t>(wy0);
  const auto y1 = static_cast<std::uint32_t>(wy1);
  const std::uint32_t top = w00 * x0 + w01 * x1;
  const std::uint32_t bottom = w10 * x0 + w11 * x1;
  const std::uint32_t v_rb = (top & rb) * y0 + (bottom & rb) * y1; // R bits 0..11, B 20..31
  const std::uint32_t v_g = (top & g) * y0 + (bottom & g) * y1;    // G bits 10..21
  v[0] = __fsub_rn(__uint_as_float((v_rb & 0xFFFU) | 0x49000000U), 524288.0F);
  v[1] = __fsub_rn(__uint_as_float(v_g | 0x44000000U), 512.0F); // 2^9: ulp 2^-14 = 2^-4 / 2^10
  v[2] = __fsub_rn(__uint_as_float((v_rb >> 20U) | 0x49000000U), 524288.0F);
}

template <augment_interp Interp, typename Out, bool Quarter>
__global__ void __launch_bounds__(fast::threads,
                                  smem_plan<Interp == augment_interp::bilinear>::blocks_per_sm)
    augment_fused_fast(const __grid_constant__ fused_args a) {
  static_assert(!Quarter || Interp == augment_interp::nearest, "the quarter resize is nearest's");
  using namespace fast;
  constexpr bool htable = Interp == augment_interp::bilinear;
  using plan = smem_plan<htable>;
  __shared__ __align__(16) float raw[channels * raw_plane];
  __shared__ __align__(16) float rows[plan::rows_floats];
  // The window: one word per pixel, byte c = channel c; with Quarter, channel c in bits 10c..10c+9.
  auto* box = reinterpret_cast<std::uint32_t*>(htable ? raw : rows);
  float* htab = rows; // bilinear
  // Samples outside the tables resize to 0 without leaving the straight path, through sentinel
  // entries: without Quarter, entry tap_capacity of each table reads a zero word; with Quarter,
  // every entry past the reach has zero weights.
  __shared__ int4 tap_x[tap_capacity + 1];
  __shared__ int4 tap_y[tap_capacity + 1];
  // With Quarter a column tap is packed into 8 bytes (a warp's 32 loads in 2 wavefronts instead
  // of 4): the two byte offsets in 16 bits each, then the two integer weights in 16 bits each.
  auto* tap_x2 = reinterpret_cast<int2*>(tap_x);
  __shared__ std::uint32_t zero_word;
  __shared__ float2 row_terms[halo_h];
  __shared__ reach strip_reach[8];

  // Grid: one dimension over the tile columns of the launch's images (column q = image * tiles_x
  // + x). The first long_columns run as strips of a.strip tiles, the rest one tile per block:
  // blocks start in index order, so the last wave is made of short blocks.
  int column = 0;
  int first_row = 0;
  int strip = 1;
  {
    const int b = static_cast<int>(blockIdx.x);
    const int long_blocks = a.long_columns * a.per_column;
    if (b < long_blocks) {
      column = div_small(b, a.per_column, a.inv_per_column);
      first_row = (b - column * a.per_column) * a.strip;
      strip = a.strip;
    } else {
      const int r = b - long_blocks;
      column = a.long_columns + div_small(r, a.tiles_y, a.inv_tiles_y);
      first_row = r - (column - a.long_columns) * a.tiles_y;
    }
  }
  const int image = a.first_image + div_small(column, a.tiles_x, a.inv_tiles_x);
  const int x0 = (column - (image - a.first_image) * a.tiles_x) * tw;
  const augment_sample& sp = a.samples[image];
  const float cos_a = sp.cos_a;
  const float sin_a = sp.sin_a;
  const int top = sp.top;
  const int left = sp.left;
  const std::uint32_t bias = a.float_bias;
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % 32;
  const int warp = t / 32;
  constexpr int warps = threads / 32;
  float w[taps];
#pragma unroll
  for (int k = 0; k < taps; ++k) w[k] = sp.weights[k];

  const std::size_t plane_bytes =
      static_cast<std::size_t>(a.height) * static_cast<std::size_t>(a.width);
  const std::uint8_t* image_in = a.input + static_cast<std::size_t>(image) * channels * plane_bytes;
  const std::size_t out_plane = static_cast<std::size_t>(a.size) * static_cast<std::size_t>(a.size);
  Out* image_out =
      static_cast<Out*>(a.out) + static_cast<std::size_t>(image) * channels * out_plane;

  // The column pass: thread t's channel (fast::column_pass), its normalize and output plane.
  const int column_channel = t / ((tw / 4) * (th / column_rows));
  const float column_inv_std = a.inv_std[column_channel];
  const float column_offset = normalize_offset(a.mean[column_channel], column_inv_std);
  Out* const column_out = image_out + static_cast<std::size_t>(column_channel) * out_plane;

  // Sampling: a thread owns one halo column (the same in every tile of the strip) and every 5th
  // halo row. Warps 0..4 take columns 0..31 (lane = column) and first row = warp; lanes 0..29 of
  // warp 5 take columns 32..37 (lane % 6) from row lane / 6. A warp of the first five then
  // stores 32 consecutive floats of one row, one shared-memory wavefront where a warp straddling
  // two rows needed two.
  constexpr int row_step = 5;
  static_assert(row_step * tw + row_step * (halo_w - tw) <= threads, "one column-row per thread");
  const bool sampler = warp < row_step || lane < row_step * (halo_w - tw);
  const int hx = warp < row_step ? lane : tw + lane % (halo_w - tw);
  const int hy0 = warp < row_step ? warp : lane / (halo_w - tw);
  const float dx =
      am::sub_rn(static_cast<float>(halo_coordinate(x0, hx, radius, a.size)), a.centre);
  const float cdx = am::mul_rn(cos_a, dx);
  const float sdx = am::mul_rn(sin_a, dx);

  // The reach of every tile of the strip, one lane each; the float path's sentinels, once.
  if (t < strip)
    strip_reach[t] = tile_reach<htable>(a, x0, (first_row + t) * th, cos_a, sin_a, left);
  if (!htable && !Quarter && t == 32) {
    zero_word = 0;
    const int zero_offset = static_cast<int>(reinterpret_cast<const char*>(&zero_word) -
                                             reinterpret_cast<const char*>(box));
    const int lerp0 = __float_as_int(0.0F); // the weight of tap 1
    tap_x[tap_capacity] = make_int4(0, 0, lerp0, 0);
    tap_y[tap_capacity] = make_int4(zero_offset, zero_offset, lerp0, 0);
  }

  for (int j = 0; j < strip; ++j) {
    const int y0 = (first_row + j) * th;
    const bool carried = !htable && j > 0; // rows 0..5 come from the tile above
    // The previous tile's column pass is done with `rows` (which the window reuses) and its
    // row-blurred halo rows 32..37 are in raw rows 0..5.
    if (j > 0) __syncthreads();
    if (t < halo_h) {
      const float d =
          am::sub_rn(static_cast<float>(halo_coordinate(y0, t, radius, a.size)), a.centre);
      row_terms[t] = make_float2(am::mul_rn(sin_a, d), am::mul_rn(cos_a, d));
    }
    __syncthreads();
    const reach e = strip_reach[j];

    // Tap tables: window column offsets and weight per reachable resized column; per reachable
    // resized row the offsets of its two source rows in the window (nearest) or h table (bilinear).
    // Nearest reads the window straight from the sample loop: its offsets are in bytes.
    const int row_pitch = htable ? e.nx : e.bws * 4;
    const int column_scale = htable ? 1 : 4;
    // Quarter: the weights as integers, 4 (1 - l1) and 4 l1.
    const auto weights = [](const am::resize_tap& tap) {
      if constexpr (Quarter) {
        const int k = static_cast<int>(tap.l1 * 4.0F);
        return make_int2(4 - k, k);
      } else {
        return make_int2(__float_as_int(tap.l1), 0);
      }
    };
    // Quarter fills the tables up to tap_capacity: entries past the reach are sentinels with
    // zero weights (any sample that reads one resizes to 0) and in-window offsets.
    const int x_entries = Quarter ? tap_capacity + 1 : e.nx;
    const int y_entries = Quarter ? tap_capacity + 1 : e.ny;
    for (int i = t; i < x_entries; i += threads) {
      if (Quarter && i >= e.nx) {
        tap_x2[i] = make_int2(0, 0);
        continue;
      }
      const am::resize_tap tap = am::resize_source(e.rx0 + i, a.scale, a.crop);
      const int2 wt = weights(tap);
      const int o0 = (tap.i0 + e.x_origin) * column_scale;
      const int o1 = (tap.i1 + e.x_origin) * column_scale;
      if constexpr (Quarter) // offsets below 2^16: a window row holds at most 3648 words
        tap_x2[i] = make_int2(o0 | (o1 << 16), wt.x | (wt.y << 16));
      else
        tap_x[i] = make_int4(o0, o1, wt.x, wt.y);
    }
    for (int i = t; i < y_entries; i += threads) {
      if (Quarter && i >= e.ny) {
        tap_y[i] = make_int4(0, 0, 0, 0);
        continue;
      }
      const am::resize_tap tap = am::resize_source(e.ry0 + i, a.scale, a.crop);
      const int2 wt = weights(tap);
      tap_y[i] = make_int4((tap.i0 - e.wy0) * row_pitch, (tap.i1 - e.wy0) * row_pitch, wt.x, wt.y);
    }
    {
      // 4 pixels of each channel per load, item i = word i - by * words of window row
      // by = i / words (div_by_reciprocal: items < 2^11), every lane busy.
      const int words = e.bwl / 4;
      const int items = e.bh * words;
      const float inv_words = 1.0F / static_cast<float>(words);
      const std::uint8_t* plane = image_in + static_cast<std::size_t>(top + e.wy0) * a.width + e.gx;
      // A thread's two items (windows above 192 items, about 280 at 45 degrees) load together:
      // every warp then waits for global memory once per tile, not twice.
      const auto window_word = [&](int i, int by) {
        return reinterpret_cast<const std::uint32_t*>(plane + by * a.width) + (i - by * words);
      };
      const auto store_item = [&](int i, int by, std::uint32_t r, std::uint32_t g,
                                  std::uint32_t b) {
        uint4* out = reinterpret_cast<uint4*>(box + by * e.bws) + (i - by * words);
        if constexpr (Quarter) {
          const auto pixel = [&](int sel) { // sel: 0x4440 + byte
            return __byte_perm(r, 0U, sel) | (__byte_perm(g, 0U, sel) << 10U) |
                   (__byte_perm(b, 0U, sel) << 20U);
          };
          *out = make_uint4(pixel(0x4440), pixel(0x4441), pixel(0x4442), pixel(0x4443));
        } else {
          const std::uint32_t rg_lo = __byte_perm(r, g, 0x5140);
          const std::uint32_t rg_hi = __byte_perm(r, g, 0x7362);
          *out = make_uint4(__byte_perm(rg_lo, b, 0x0410), __byte_perm(rg_lo, b, 0x0532),
                            __byte_perm(rg_hi, b, 0x0610), __byte_perm(rg_hi, b, 0x0732));
        }
      };
      for (int i = t; i < items; i += 2 * threads) {
        const int by0 = div_by_reciprocal(i, inv_words);
        const std::uint32_t* in0 = window_word(i, by0);
        const std::uint32_t r0 = __ldg(in0);
        const std::uint32_t g0 = __ldg(in0 + plane_bytes / 4);
        const std::uint32_t b0 = __ldg(in0 + plane_bytes / 2);
        const int i1 = i + threads;
        int by1 = 0;
        std::uint32_t r1 = 0;
        std::uint32_t g1 = 0;
        std::uint32_t b1 = 0;
        if (i1 < items) {
          by1 = div_by_reciprocal(i1, inv_words);
          const std::uint32_t* in1 = window_word(i1, by1);
          r1 = __ldg(in1);
          g1 = __ldg(in1 + plane_bytes / 4);
          b1 = __ldg(in1 + plane_bytes / 2);
        }
        store_item(i, by0, r0, g0, b0);
        if (i1 < items) store_item(i1, by1, r1, g1, b1);
      }
    }
    __syncthreads();

    if constexpr (htable) {
      // The h table: entry (window row r, reachable column j) of channel c is the horizontal lerp
      // of the two window pixels behind resized column rx0 + j. One warp per window row.
      for (int r = warp; r < e.bh; r += warps) {
        const std::uint32_t* src = box + r * e.bws;
        float* dst = htab + r * e.nx;
        for (int j = lane; j < e.nx; j += 32) {
          const int4 tx = tap_x[j];
          const float lx = __int_as_float(tx.z);
          const std::uint32_t w0 = src[tx.x];
          const std::uint32_t w1 = src[tx.y];
          dst[j] = lerp_biased(biased_channel<0>(w0, bias), biased_channel<0>(w1, bias), lx);
          dst[j + h_plane] =
              lerp_biased(biased_channel<1>(w0, bias), biased_channel<1>(w1, bias), lx);
          dst[j + 2 * h_plane] =
              lerp_biased(biased_channel<2>(w0, bias), biased_channel<2>(w1, bias), lx);
        }
      }
      __syncthreads();
    }

    // Sample the halo: each thread its halo column and every 5th halo row (see hx, hy0 above).
    const auto n = static_cast<unsigned>(a.size);
    // All channels of resized pixel (xr, yr), inside the output, from the uint8 input: for pixels
    // the tile's tables do not reach. Every route computes augment_math's resize with the same
    // operations (lerp on exact byte values equals lerp_bytes and lerp_biased bit for bit).
    const auto from_input = [&](int xr, int yr, float(&v)[channels]) {
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
    };
    // Bilinear's corners one by one: a vertical lerp of two h table entries, or from the input.
    const auto resized = [&](int xr, int yr, float(&v)[channels]) {
      const unsigned jx = static_cast<unsigned>(xr - e.rx0);
      const unsigned jy = static_cast<unsigned>(yr - e.ry0);
      if (jx < static_cast<unsigned>(e.nx) && jy < static_cast<unsigned>(e.ny)) {
        const int4 ty = tap_y[jy];
        const float ly = __int_as_float(ty.z);
        const float* upper = htab + ty.x + static_cast<int>(jx);
        const float* lower = htab + ty.y + static_cast<int>(jx);
#pragma unroll
        for (int c = 0; c < channels; ++c)
          v[c] = am::lerp(upper[c * h_plane], lower[c * h_plane], ly);
      } else {
        from_input(xr, yr, v);
      }
    };
    // A carried tile samples only its halo rows 6..37 (bilinear stages its window where the
    // carried rows would be kept, so it never carries).
    const int first = carried ? hy0 + (2 * radius - hy0 + row_step - 1) / row_step * row_step : hy0;
    if (sampler) {
#pragma unroll 2
      for (int hy = first; hy < halo_h; hy += row_step) {
        const float2 rt = row_terms[hy];
        const float xs = am::add_rn(am::sub_rn(cdx, rt.x), a.centre);
        const float ys = am::add_rn(am::add_rn(sdx, rt.y), a.centre);
        float* dst = raw + hy * raw_stride + hx + 1;
        float v[channels];
        if constexpr (Interp == augment_interp::nearest) {
          const int xr = am::round_to_int(xs);
          const int yr = am::round_to_int(ys);
          // Straight through the tables; a pixel outside them reads the sentinels (0), which is
          // right: when anything is tabulated, the tables hold the tile's whole reach inside the
          // image. The reach comes from the halo box's corners through the same rounded
          // operations, each monotonic in dx and dy, so no sample inside the box lands beyond
          // the corners' range (and tile_resized_reach adds a pixel of margin for the rounding
          // to an integer). When nothing is tabulated, the tile is redone after the loop.
          const unsigned jx = static_cast<unsigned>(xr - e.rx0);
          const unsigned jy = static_cast<unsigned>(yr - e.ry0);
          constexpr auto capacity = static_cast<unsigned>(tap_capacity);
          // Quarter clamps each index on its own: its sentinels have zero weights, so either
          // one outside makes the value 0 whatever words the offsets read. The float path needs
          // both sentinels at once (its tap_y sentinel points at a zero word).
          const bool tabulated =
              Quarter || (jx < static_cast<unsigned>(e.nx) && jy < static_cast<unsigned>(e.ny));
          const int4 ty = tap_y[Quarter ? min(jy, capacity) : tabulated ? jy : capacity];
          int4 tx;
          if constexpr (Quarter) {
            const int2 p = tap_x2[min(jx, capacity)];
            tx = make_int4(p.x & 0xFFFF, static_cast<int>(static_cast<unsigned>(p.x) >> 16U),
                           p.y & 0xFFFF, static_cast<int>(static_cast<unsigned>(p.y) >> 16U));
          } else {
            tx = tap_x[tabulated ? jx : tap_capacity];
          }
          const char* base = reinterpret_cast<const char*>(box);
          const auto word = [&](int offset) {
            return *reinterpret_cast<const std::uint32_t*>(base + offset);
          };
          const std::uint32_t w00 = word(ty.x + tx.x);
          const std::uint32_t w01 = word(ty.x + tx.y);
          const std::uint32_t w10 = word(ty.y + tx.x);
          const std::uint32_t w11 = word(ty.y + tx.y);
          if constexpr (Quarter) {
            quarter_resize(w00, w01, w10, w11, tx.z, tx.w, ty.z, ty.w, v);
          } else {
            const float lx = __int_as_float(tx.z);
            const float ly = __int_as_float(ty.z);
            v[0] = resize_word<0>(w00, w01, w10, w11, lx, ly, bias);
            v[1] = resize_word<1>(w00, w01, w10, w11, lx, ly, bias);
            v[2] = resize_word<2>(w00, w01, w10, w11, lx, ly, bias);
          }
        } else {
          const int xf = am::floor_to_int(xs);
          const int yf = am::floor_to_int(ys);
          const float fx = am::sub_rn(xs, static_cast<float>(xf));
          const float fy = am::sub_rn(ys, static_cast<float>(yf));
          const int jx = xf - e.rx0;
          const int jy = yf - e.ry0;
          if (jx >= 0 && jx < e.nx - 1 && jy >= 0 && jy < e.ny - 1) {
            // All four corners in the table (and so inside the image): the common case, straight
            // through. The same lerps as resized() and the general case below.
            const int4 t0 = tap_y[jy];
            const int4 t1 = tap_y[jy + 1];
            const float l0 = __int_as_float(t0.z);
            const float l1 = __int_as_float(t1.z);
            const float* u0 = htab + t0.x + jx;
            const float* d0 = htab + t0.y + jx;
            const float* u1 = htab + t1.x + jx;
            const float* d1 = htab + t1.y + jx;
#pragma unroll
            for (int c = 0; c < channels; ++c) {
              const int o = c * h_plane;
              const float q00 = am::lerp(u0[o], d0[o], l0);
              const float q01 = am::lerp(u0[o + 1], d0[o + 1], l0);
              const float q10 = am::lerp(u1[o], d1[o], l1);
              const float q11 = am::lerp(u1[o + 1], d1[o + 1], l1);
              v[c] = am::lerp(am::lerp(q00, q01, fx), am::lerp(q10, q11, fx), fy);
            }
          } else {
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
        }
#pragma unroll
        for (int c = 0; c < channels; ++c) dst[c * raw_plane] = v[c];
      }
    }
    __syncthreads();
    if (!htable && e.nx == 0) {
      // Nothing tabulated (the window is too large to stage, when shrinking a lot): every
      // sample inside the image from the input.
      if (sampler) {
        for (int hy = first; hy < halo_h; hy += row_step) {
          const float2 rt = row_terms[hy];
          const int xr = am::round_to_int(am::add_rn(am::sub_rn(cdx, rt.x), a.centre));
          const int yr = am::round_to_int(am::add_rn(am::add_rn(sdx, rt.y), a.centre));
          if (static_cast<unsigned>(xr) >= n || static_cast<unsigned>(yr) >= n) continue;
          float v[channels];
          from_input(xr, yr, v);
#pragma unroll
          for (int c = 0; c < channels; ++c) raw[c * raw_plane + hy * raw_stride + hx + 1] = v[c];
        }
      }
      __syncthreads();
    }
    // Row-blurred halo rows 32..37 of a tile are rows 0..5 of the tile below: a carried tile
    // gets them back from raw rows 0..5, where the previous tile left them, and blurs only the
    // 32 rows it sampled (384 items, 2 per thread).
    constexpr int carry_vectors = 2 * radius * tw / 4; // per channel
    if (carried) {
      for (int i = t; i < channels * carry_vectors; i += threads) {
        const int c = i / carry_vectors;
        const int k = i - c * carry_vectors;
        reinterpret_cast<float4*>(rows + c * rows_plane)[k] =
            reinterpret_cast<const float4*>(raw + c * raw_plane)[k];
      }
      row_pass<2 * radius>(raw, rows, w);
    } else {
      row_pass(raw, rows, w);
    }
    __syncthreads();
    if (!htable && j + 1 < strip) {
      // Keep rows 32..37 for the tile below in raw rows 0..5 (raw is free now; that tile samples
      // only its rows 6..37).
      for (int i = t; i < channels * carry_vectors; i += threads) {
        const int c = i / carry_vectors;
        const int k = i - c * carry_vectors;
        reinterpret_cast<float4*>(raw + c * raw_plane)[k] =
            reinterpret_cast<const float4*>(rows + c * rows_plane)[th * tw / 4 + k];
      }
    }
    column_pass(rows, w, [&](int, int ty, int tx, float4 v) {
      v = normalize4(v, column_inv_std, column_offset);
      store4(column_out + ((y0 + ty) * a.size + x0 + tx), v, true, 4);
    });
  }
}

/// Tiles per block down a tile column. A block that goes on to the tile below reuses the 6 halo
/// rows the two share (38 rows sampled become 32, their row pass carried over) and its per-block
/// setup, but longer strips mean fewer blocks: strips grow (1, 2, 4 tiles) only while the grid
/// still fills the GPU at least twice over; the single-tile tail (tail_columns) keeps the last
/// wave short. Measured on the H200 (images/s, strips 1 / 2 / 4 / 8): batch 64 1.47 / 1.56 /
/// 1.54 / 1.25 M, batch 128 - / 1.71 / 1.79 / 1.62 M, batch 256 - / 1.81 / 1.89 / 1.87 M.
int strip_length(int batch, int tiles_x, int tiles_y, int resident) {
  int strip = 1;
  const long long columns = static_cast<long long>(batch) * tiles_x;
  while (strip < 4 && tiles_y % (2 * strip) == 0 &&
         columns * (tiles_y / (2 * strip)) >= 2LL * resident)
    strip *= 2;
  return strip;
}

/// Tile columns at the end of the grid that run one tile per block. The hardware starts blocks in
/// index order, so with strips alone the last wave is a partial wave of long blocks and most SMs
/// sit idle while it finishes (at batch 256, strips of 4: 4096 blocks on 792 slots, 5.2 waves).
/// Ending with about one wave of single tiles makes that tail a quarter as long.
int tail_columns(int strip, int tiles_y, int resident) {
  return strip > 1 ? (resident + tiles_y - 1) / tiles_y : 0;
}

template <augment_interp Interp, bool Quarter>
fused_kernel pick_out_fast(dtype out) {
  switch (out) {
  case dtype::f16: return augment_fused_fast<Interp, __half, Quarter>;
  case dtype::bf16: return augment_fused_fast<Interp, __nv_bfloat16, Quarter>;
  case dtype::f32:
  case dtype::f64: break;
  }
  return augment_fused_fast<Interp, float, Quarter>;
}

/// Whether every resize weight is a multiple of 1/4 (quarter_resize applies): no resize, an
/// exact 2x upsample (weights 1/4 and 3/4) or 2x downsample (1/2).
bool quarter_weights(const augment_shape& shape) {
  for (int d = 0; d < shape.resize; ++d) {
    const float k = am::resize_source(d, shape.scale, shape.crop).l1 * 4.0F;
    if (!(k >= 0.0F && k <= 4.0F) || k != static_cast<float>(static_cast<int>(k))) return false;
  }
  return true;
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
  a.float_bias = 0x4B000000U;
  for (int c = 0; c < augment_max_channels; ++c) {
    a.mean[c] = shape.mean[c];
    a.inv_std[c] = shape.inv_std[c];
  }
  if (shape.channels == fast::channels && shape.radius == fast::radius &&
      shape.resize % fast::tw == 0 && shape.width % 4 == 0) {
    const int tiles_x = shape.resize / fast::tw;
    const int tiles_y = shape.resize / fast::th;
    const fused_kernel kernel =
        shape.interp == augment_interp::bilinear
            ? fastk::pick_out_fast<augment_interp::bilinear, false>(shape.out)
        : fastk::quarter_weights(shape)
            ? fastk::pick_out_fast<augment_interp::nearest, true>(shape.out)
            : fastk::pick_out_fast<augment_interp::nearest, false>(shape.out);
    if (shape.fused_strip < 0 || shape.fused_strip > 8 ||
        (shape.fused_strip > 0 && tiles_y % shape.fused_strip != 0))
      throw std::invalid_argument("augment: fused_strip must be 0 or divide the tile rows (<= 8)");
    const int resident = resident_blocks(reinterpret_cast<const void*>(kernel), fast::threads, 0);
    a.strip = shape.fused_strip > 0 ? shape.fused_strip
                                    : fastk::strip_length(shape.batch, tiles_x, tiles_y, resident);
    a.tiles_x = tiles_x;
    a.tiles_y = tiles_y;
    a.per_column = tiles_y / a.strip;
    a.inv_per_column = 1.0F / static_cast<float>(a.per_column);
    a.inv_tiles_y = 1.0F / static_cast<float>(tiles_y);
    a.inv_tiles_x = 1.0F / static_cast<float>(tiles_x);
    // Blocks of one launch (at most one per tile) stay below 2^31: launches go in chunks of images.
    const long long tiles_per_image = static_cast<long long>(tiles_x) * tiles_y;
    if (tiles_per_image > INT_MAX)
      throw cuda_error(cudaErrorInvalidValue, "augment_fused: the output has too many tiles");
    const int chunk = static_cast<int>(std::min<long long>(shape.batch, INT_MAX / tiles_per_image));
    for (int first = 0; first < shape.batch; first += chunk) {
      const int columns = std::min(chunk, shape.batch - first) * tiles_x;
      // About one wave of single-tile blocks at the end (fastk::tail_columns); none by default
      // when the strip is forced.
      const int tail = std::min(columns, shape.fused_tail >= 0 ? shape.fused_tail
                                         : shape.fused_strip > 0
                                             ? 0
                                             : fastk::tail_columns(a.strip, tiles_y, resident));
      a.first_image = first;
      a.long_columns = columns - tail;
      const long long blocks = static_cast<long long>(a.long_columns) * (tiles_y / a.strip) +
                               static_cast<long long>(tail) * tiles_y;
      kernel<<<static_cast<unsigned>(blocks), fast::threads, 0, s>>>(a);
      GPUBENCH_CHECK_LAUNCH("augment_fused");
    }
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
