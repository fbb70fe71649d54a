// The fast fused kernel: the default shape (3 channels, radius 3, output side a multiple of 32),
// with the per-tile tables and window staging that augment_fused_fast.cuh describes.
#include "augment_fused_fast.cuh"
#include "gpubench/cuda/error.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace gpubench::cuda {

namespace {

using namespace augment_detail;

namespace fastk {

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
  // + x); place_block says which column, rows and strip this block takes.
  const tile_place place = place_block(a);
  const int column = place.column;
  const int first_row = place.first_row;
  const int strip = place.strip;
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

    fill_tap_tables<Quarter, htable>(a, e, t, tap_x, tap_y);
    stage_window_words<Quarter>(a, e, image_in, plane_bytes, top, t, box);
    __syncthreads();

    if constexpr (htable) {
      fill_h_table(e, tap_x, box, htab, warp, lane, bias);
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
/// wave short. The strip lengths measured on the H200 are in docs/augment.md ("Strips").
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

} // namespace

bool augment_detail::fused_fast_applies(const augment_shape& shape) {
  return shape.channels == fast::channels && shape.radius == fast::radius &&
         shape.resize % fast::tw == 0 && shape.width % 4 == 0;
}

void augment_detail::launch_fused_fast(fused_args a, const augment_shape& shape, cudaStream_t s) {
  const int tiles_x = shape.resize / fast::tw;
  const int tiles_y = shape.resize / fast::th;
  const fused_kernel kernel = shape.interp == augment_interp::bilinear
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
}

} // namespace gpubench::cuda
