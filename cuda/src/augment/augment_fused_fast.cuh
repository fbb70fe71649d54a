#pragma once
// The fast fused kernel's device helpers (augment_fused_fast.cu).
//
//
// Same result as the generic kernel, organised around what the default shape costs: sampling the
// rotated halo (1444 pixels for a 32 x 32 tile, 3 channels each) and the blur. Everything that
// does not depend on the pixel is tabulated in shared memory once per tile: the resize taps of
// the resized rows and columns the tile can reach, as offsets into the staged crop window, and
// the rotation products of the halo rows. How the window is staged depends on the interpolation:
// - nearest reads one resized pixel per halo pixel, 4 crop pixels per channel: the window is
//   staged as one word per pixel (a byte per channel, so one load serves all 3 channels) where
//   the row-blurred halo goes later; ~37 KB of shared memory, 6 blocks per SM on an H200.
// - bilinear reads 4 resized pixels per halo pixel, 16 crop pixels per channel. The resize is
//   separable and its horizontal half does not depend on the output row, so for every crop row of
//   the window and every reachable resized column the horizontal lerp is computed once per tile
//   ("h table", where the row-blurred halo goes later); a resized pixel is then one vertical lerp
//   of two entries. The window is staged where the halo goes later; ~45 KB, 5 blocks per SM on an
//   H200.
// Both compute the resize with the same operations in the same order as augment_math, so the bits
// equal the generic kernel's and the staged path's. The blur runs on 32 x 32 tiles (fast:: in
// augment_device.cuh). A block handles a strip of tiles down one tile column (strip_length);
// with nearest, each tile after the first samples only the 32 halo rows it does not share with
// the tile above.
#include "augment_fused.cuh"

#include <algorithm>

namespace gpubench::cuda {

namespace {

using namespace augment_detail;

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
  /// Static shared memory of one block: the two planes, the tap tables, the zero word, the row
  /// terms and the strip reaches (sizeof(reach) is 40); ptxas reports 37,360 and 45,040 bytes.
  static constexpr int smem_bytes = 4 * (fast::channels * fast::raw_plane + rows_floats) +
                                    2 * 16 * (tap_capacity + 1) + 4 + 8 * fast::halo_h + 8 * 40;
  /// The launch bounds' blocks per SM: as many as the architecture's shared memory holds (1 KB
  /// reserved per block), at most the count tuned on the H200 (6 nearest, 5 bilinear: registers
  /// capped at 56 and 64). On an A100 (164 KB) that is 4 and 3, on an L40 (100 KB) 2 and 2, and
  /// the registers are no longer capped for blocks that could never be resident.
  static constexpr int blocks_per_sm =
      std::max(1, std::min(HTable ? 5 : 6, fast::smem_per_sm_bytes() / (smem_bytes + 1024)));
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

/// Where a block starts: its tile column (image * tiles_x + x), first tile row and tiles down the
/// column. The first long_columns run as strips of a.strip tiles, the rest one tile per block:
/// blocks start in index order, so the last wave is made of short blocks.
struct tile_place {
  int column;
  int first_row;
  int strip;
};

__device__ __forceinline__ tile_place place_block(const fused_args& a) {
  const int b = static_cast<int>(blockIdx.x);
  const int long_blocks = a.long_columns * a.per_column;
  if (b < long_blocks) {
    const int column = div_small(b, a.per_column, a.inv_per_column);
    return {column, (b - column * a.per_column) * a.strip, a.strip};
  }
  const int r = b - long_blocks;
  const int column = a.long_columns + div_small(r, a.tiles_y, a.inv_tiles_y);
  return {column, r - (column - a.long_columns) * a.tiles_y, 1};
}

/// Tap tables: window column offsets and weight per reachable resized column; per reachable
/// resized row the offsets of its two source rows in the window (nearest) or h table (bilinear).
/// Nearest reads the window straight from the sample loop: its offsets are in bytes. With
/// Quarter a column tap is packed into 8 bytes (see the kernel's tap_x2).
template <bool Quarter, bool HTable>
__device__ __forceinline__ void fill_tap_tables(const fused_args& a, const reach& e, int t,
                                                int4* tap_x, int4* tap_y) {
  auto* tap_x2 = reinterpret_cast<int2*>(tap_x);
  const int row_pitch = HTable ? e.nx : e.bws * 4;
  const int column_scale = HTable ? 1 : 4;
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
  for (int i = t; i < x_entries; i += fast::threads) {
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
  for (int i = t; i < y_entries; i += fast::threads) {
    if (Quarter && i >= e.ny) {
      tap_y[i] = make_int4(0, 0, 0, 0);
      continue;
    }
    const am::resize_tap tap = am::resize_source(e.ry0 + i, a.scale, a.crop);
    const int2 wt = weights(tap);
    tap_y[i] = make_int4((tap.i0 - e.wy0) * row_pitch, (tap.i1 - e.wy0) * row_pitch, wt.x, wt.y);
  }
}

/// Copies the window's pixels into shared memory as one word per pixel (byte c = channel c; with
/// Quarter, channel c in bits 10c..10c+9): 4 pixels of each channel per load, item i = word
/// i - by * words of window row by = i / words (div_by_reciprocal: items < 2^11), every lane busy.
template <bool Quarter>
__device__ __forceinline__ void
stage_window_words(const fused_args& a, const reach& e, const std::uint8_t* image_in,
                   std::size_t plane_bytes, int top, int t, std::uint32_t* box) {
  const int words = e.bwl / 4;
  const int items = e.bh * words;
  const float inv_words = 1.0F / static_cast<float>(words);
  const std::uint8_t* plane = image_in + static_cast<std::size_t>(top + e.wy0) * a.width + e.gx;
  // A thread's two items (windows above 192 items, about 280 at 45 degrees) load together:
  // every warp then waits for global memory once per tile, not twice.
  const auto window_word = [&](int i, int by) {
    return reinterpret_cast<const std::uint32_t*>(plane + by * a.width) + (i - by * words);
  };
  const auto store_item = [&](int i, int by, std::uint32_t r, std::uint32_t g, std::uint32_t b) {
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
  for (int i = t; i < items; i += 2 * fast::threads) {
    const int by0 = div_by_reciprocal(i, inv_words);
    const std::uint32_t* in0 = window_word(i, by0);
    const std::uint32_t r0 = __ldg(in0);
    const std::uint32_t g0 = __ldg(in0 + plane_bytes / 4);
    const std::uint32_t b0 = __ldg(in0 + plane_bytes / 2);
    const int i1 = i + fast::threads;
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

/// The h table (bilinear): entry (window row r, reachable column j) of channel c is the
/// horizontal lerp of the two window pixels behind resized column rx0 + j. One warp per window row.
__device__ __forceinline__ void fill_h_table(const reach& e, const int4* tap_x,
                                             const std::uint32_t* box, float* htab, int warp,
                                             int lane, std::uint32_t bias) {
  for (int r = warp; r < e.bh; r += fast::threads / 32) {
    const std::uint32_t* src = box + r * e.bws;
    float* dst = htab + r * e.nx;
    for (int j = lane; j < e.nx; j += 32) {
      const int4 tx = tap_x[j];
      const float lx = __int_as_float(tx.z);
      const std::uint32_t w0 = src[tx.x];
      const std::uint32_t w1 = src[tx.y];
      dst[j] = lerp_biased(biased_channel<0>(w0, bias), biased_channel<0>(w1, bias), lx);
      dst[j + h_plane] = lerp_biased(biased_channel<1>(w0, bias), biased_channel<1>(w1, bias), lx);
      dst[j + 2 * h_plane] =
          lerp_biased(biased_channel<2>(w0, bias), biased_channel<2>(w1, bias), lx);
    }
  }
}

} // namespace fastk

} // namespace

} // namespace gpubench::cuda
