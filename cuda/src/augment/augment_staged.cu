// The staged augment implementation: one kernel per op, each reading the previous op's full-batch
// result from device memory and writing its own, like the source's per-op GPU pipeline. Each
// kernel covers the whole batch in one launch and uses the same arithmetic as the fused kernel
// (augment_math and augment_device.cuh), so both produce the same values.
#include "augment_device.cuh"
#include "gpubench/cuda/error.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpubench::cuda {

namespace {

using namespace augment_detail;

constexpr int threads = 256;

// The batch first, as a base of its own: the kernels then read it and the channel count with one
// 8-byte constant load, as they did when the fields were written out here.
struct batch_arg {
  int batch;
};
struct staged_args : batch_arg, shape_args {};

__device__ __forceinline__ std::size_t grid_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t grid_stride() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

/// Op 1, the whole input: 4 bytes in, one float4 out per step.
__global__ void augment_to_float(const std::uint8_t* __restrict__ in, float* __restrict__ out,
                                 std::size_t n) {
  const std::size_t quads = n / 4;
  const auto* in4 = reinterpret_cast<const uchar4*>(in);
  auto* out4 = reinterpret_cast<float4*>(out);
  for (std::size_t i = grid_index(); i < quads; i += grid_stride()) {
    const uchar4 b = in4[i];
    out4[i] = make_float4(b.x, b.y, b.z, b.w);
  }
  for (std::size_t i = quads * 4 + grid_index(); i < n; i += grid_stride())
    out[i] = static_cast<float>(in[i]);
}

// Ops 2 to 4 and 6 use 2D thread blocks over (x, y) of one plane or image, blockIdx.z (striding by
// gridDim.z) over planes or images: no per-element integer division. Offsets within a plane fit
// in int (resize <= 8192).
constexpr unsigned max_grid_z = 65535;

__device__ __forceinline__ int plane_y() {
  return static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
}

/// Op 2: each sample's crop window. A thread owns 4 adjacent outputs of one row (one 16-byte store
/// when the rows allow it) in every channel of one image: 4 loads per channel in flight.
constexpr int crop_block_x = 32; ///< threads along x: 128 outputs
constexpr int crop_block_y = 8;

__global__ void __launch_bounds__(crop_block_x* crop_block_y)
    augment_crop(const __grid_constant__ staged_args a, const augment_sample* __restrict__ samples,
                 const float* __restrict__ full, float* __restrict__ cropped) {
  const int x = 4 * static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = plane_y();
  if (x >= a.crop || y >= a.crop) return;
  const int count = min(4, a.crop - x);
  const bool vector = a.crop % 4 == 0;
  const std::size_t crop_px = static_cast<std::size_t>(a.crop) * static_cast<std::size_t>(a.crop);
  const std::size_t in_px = static_cast<std::size_t>(a.height) * static_cast<std::size_t>(a.width);
  for (std::size_t image = blockIdx.z; image < static_cast<std::size_t>(a.batch);
       image += gridDim.z) {
    const augment_sample& sp = samples[image];
    const float* in = full + image * a.channels * in_px +
                      static_cast<std::size_t>(sp.top + y) * a.width +
                      static_cast<std::size_t>(sp.left + x);
    float* out = cropped + image * a.channels * crop_px + static_cast<std::size_t>(y) * a.crop + x;
    for (int c = 0; c < a.channels; ++c) {
      const float* ic = in + c * in_px;
      float* oc = out + c * crop_px;
      if (vector) {
        *reinterpret_cast<float4*>(oc) =
            make_float4(__ldg(ic), __ldg(ic + 1), __ldg(ic + 2), __ldg(ic + 3));
      } else {
        for (int j = 0; j < count; ++j) oc[j] = __ldg(ic + j);
      }
    }
  }
}

/// Op 3: bilinear resize of every crop. A thread owns 4 adjacent outputs of one row (one 16-byte
/// store when the row allows it) of every channel of one image; the taps are computed once.
constexpr int resize_block_x = 64; ///< threads along x: 256 outputs
constexpr int resize_block_y = 4;

// At least 4 blocks of 256 threads per SM caps registers at 64 a thread: the kernel uses no
// shared memory and every architecture since sm_50 has 64 K registers and holds at least 1024
// threads per SM, so the bound is reachable everywhere, not tuned for one GPU.
__global__ void __launch_bounds__(resize_block_x* resize_block_y, 4)
    augment_resize(const __grid_constant__ staged_args a, const float* __restrict__ cropped,
                   float* __restrict__ resized) {
  const int x = 4 * static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = plane_y();
  if (x >= a.size || y >= a.size) return;
  const auto size = static_cast<std::size_t>(a.size);
  const std::size_t crop_px = static_cast<std::size_t>(a.crop) * static_cast<std::size_t>(a.crop);
  const int count = min(4, a.size - x);
  const bool vector = a.size % 4 == 0 && count == 4;
  am::resize_tap tx[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) tx[j] = am::resize_source(min(x + j, a.size - 1), a.scale, a.crop);
  const am::resize_tap ty = am::resize_source(y, a.scale, a.crop);
  for (std::size_t image = blockIdx.z; image < static_cast<std::size_t>(a.batch);
       image += gridDim.z)
    for (int c = 0; c < a.channels; ++c) {
      const std::size_t plane = image * a.channels + c;
      const float* src = cropped + plane * crop_px;
      const float* r0 = src + static_cast<std::size_t>(ty.i0) * a.crop;
      const float* r1 = src + static_cast<std::size_t>(ty.i1) * a.crop;
      float v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float upper = am::lerp(__ldg(r0 + tx[j].i0), __ldg(r0 + tx[j].i1), tx[j].l1);
        const float lower = am::lerp(__ldg(r1 + tx[j].i0), __ldg(r1 + tx[j].i1), tx[j].l1);
        v[j] = am::lerp(upper, lower, ty.l1);
      }
      float* dst = resized + plane * size * size + static_cast<std::size_t>(y) * size + x;
      if (vector) {
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
        for (int j = 0; j < count; ++j) dst[j] = v[j];
      }
    }
}

/// Op 4: rotation. A warp covers 8 x 4 patches of outputs rather than 32 pixels of one row: at any
/// angle its source pixels then lie in a compact region (at 45 degrees about half the 32-byte
/// sectors of a row's diagonal), so the gathers cost fewer L1 wavefronts. A block is 4 x 2 warps
/// over a 32 x 32 output tile: each thread owns 4 outputs 8 rows apart, every channel, and issues
/// a channel's 4 gathers together.
constexpr int rotate_patch_w = 8;
constexpr int rotate_patch_h = 4;
constexpr int rotate_tile_w = 4 * rotate_patch_w; // 32
constexpr int rotate_step = 2 * rotate_patch_h;   // 8 rows between a thread's outputs
constexpr int rotate_per_thread = 4;
constexpr int rotate_tile_h = rotate_step * rotate_per_thread; // 32

template <augment_interp Interp>
__global__ void __launch_bounds__(rotate_tile_w* rotate_step)
    augment_rotate(const __grid_constant__ staged_args a,
                   const augment_sample* __restrict__ samples, const float* __restrict__ resized,
                   float* __restrict__ rotated) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int x = static_cast<int>(blockIdx.x) * rotate_tile_w + (warp % 4) * rotate_patch_w +
                lane % rotate_patch_w;
  const int y_first = static_cast<int>(blockIdx.y) * rotate_tile_h + (warp / 4) * rotate_patch_h +
                      lane / rotate_patch_w;
  const int s = a.size;
  if (x >= s || y_first >= s) return;
  const auto size = static_cast<std::size_t>(s);
  const std::size_t plane_px = size * size;
  const auto inside = [&](int xr, int yr) {
    return static_cast<unsigned>(xr) < static_cast<unsigned>(s) &&
           static_cast<unsigned>(yr) < static_cast<unsigned>(s);
  };
  for (std::size_t image = blockIdx.z; image < static_cast<std::size_t>(a.batch);
       image += gridDim.z) {
    const augment_sample& sp = samples[image];
    const float cos_a = sp.cos_a;
    const float sin_a = sp.sin_a;
    // Per output: the plane offset of each tap (-1: outside the image, reads 0) and the weights.
    int off[rotate_per_thread][Interp == augment_interp::nearest ? 1 : 4];
    float fx[rotate_per_thread];
    float fy[rotate_per_thread];
    bool valid[rotate_per_thread];
#pragma unroll
    for (int r = 0; r < rotate_per_thread; ++r) {
      const int y = y_first + r * rotate_step;
      valid[r] = y < s;
      const am::point2 p = am::rotation_source(x, y, a.centre, a.centre, cos_a, sin_a);
      if constexpr (Interp == augment_interp::nearest) {
        const int xr = am::round_to_int(p.x);
        const int yr = am::round_to_int(p.y);
        off[r][0] = inside(xr, yr) ? yr * s + xr : -1;
        fx[r] = fy[r] = 0.0F;
      } else {
        const int x0 = am::floor_to_int(p.x);
        const int y0 = am::floor_to_int(p.y);
        fx[r] = am::sub_rn(p.x, static_cast<float>(x0));
        fy[r] = am::sub_rn(p.y, static_cast<float>(y0));
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int xr = x0 + (k & 1);
          const int yr = y0 + (k >> 1);
          off[r][k] = inside(xr, yr) ? yr * s + xr : -1;
        }
      }
    }
    for (int c = 0; c < a.channels; ++c) {
      const std::size_t plane = image * a.channels + c;
      const float* src = resized + plane * plane_px;
      const auto at = [&](int o) { return o >= 0 ? __ldg(src + o) : 0.0F; };
      float v[rotate_per_thread];
#pragma unroll
      for (int r = 0; r < rotate_per_thread; ++r) {
        if constexpr (Interp == augment_interp::nearest) {
          v[r] = at(off[r][0]);
        } else {
          v[r] = am::lerp(am::lerp(at(off[r][0]), at(off[r][1]), fx[r]),
                          am::lerp(at(off[r][2]), at(off[r][3]), fx[r]), fy[r]);
        }
      }
      float* dst = rotated + plane * plane_px + static_cast<std::size_t>(y_first) * size + x;
#pragma unroll
      for (int r = 0; r < rotate_per_thread; ++r)
        if (valid[r]) dst[static_cast<std::size_t>(r) * rotate_step * size] = v[r];
    }
  }
}

/// Op 5: the blur, one block per output tile of one image; the tile and its reflected border are
/// staged in shared memory (augment_device.cuh), rows then columns.
template <int R>
__global__ void __launch_bounds__(block_threads)
    augment_blur(const __grid_constant__ staged_args a, const augment_sample* __restrict__ samples,
                 const float* __restrict__ rotated, float* __restrict__ blurred, int tiles_x,
                 int tiles_per_image, int channel_group) {
  extern __shared__ float4 shared4[];
  float* shared = reinterpret_cast<float*>(shared4);
  const int radius = R >= 0 ? R : a.radius;
  const halo_shape hs(radius);
  float* weights = shared;
  float* raw = shared + (augment_max_blur + 1);
  float* rows = raw + channel_group * hs.raw_floats();

  const int image = static_cast<int>(blockIdx.x) / tiles_per_image;
  const int tile = static_cast<int>(blockIdx.x) - image * tiles_per_image;
  const int tile_y = tile / tiles_x;
  const int x0 = (tile - tile_y * tiles_x) * tile_w;
  const int y0 = tile_y * tile_h;
  const int t = static_cast<int>(threadIdx.x);
  for (int i = t; i <= 2 * radius; i += block_threads) weights[i] = samples[image].weights[i];
  __syncthreads();
  const blur_weights<R> w(weights); // registers when R is known

  const auto size = static_cast<std::size_t>(a.size);
  const std::size_t plane_px = size * size;
  for (int c0 = 0; c0 < a.channels; c0 += channel_group) {
    const int group = min(channel_group, a.channels - c0);
    const float* src = rotated + (static_cast<std::size_t>(image) * a.channels + c0) * plane_px;
    // One warp per halo row, lanes along it: one division per row, none per pixel.
    const int lane = t % 32;
    for (int row = t / 32; row < group * hs.h; row += block_threads / 32) {
      const int c = row / hs.h;
      const int hy = row - c * hs.h;
      const float* in = src + static_cast<std::size_t>(c) * plane_px +
                        static_cast<std::size_t>(halo_coordinate(y0, hy, radius, a.size)) * size;
      float* out = raw + c * hs.raw_floats() + hy * hs.stride;
      for (int hx = lane; hx < hs.w; hx += 32)
        out[hx] = in[halo_coordinate(x0, hx, radius, a.size)];
    }
    __syncthreads();
    float* dst = blurred + (static_cast<std::size_t>(image) * a.channels + c0) * plane_px;
    const bool vector_rows = a.size % 4 == 0;
    blur_tile<R>(raw, rows, group, hs, w.get(), [&](int c, int ty, int tx, float4 v) {
      const int y = y0 + ty;
      const int x = x0 + tx;
      if (y >= a.size || x >= a.size) return;
      float* p =
          dst + static_cast<std::size_t>(c) * plane_px + static_cast<std::size_t>(y) * size + x;
      store4(p, v, vector_rows && x + 3 < a.size, a.size - x);
    });
    __syncthreads();
  }
}

/// The staged fast blur's blocks per SM for its launch bounds: as many as the architecture's
/// shared memory holds (its two planes of all channels, 1 KB reserved per block), at most the 6
/// tuned on the H200; on an architecture with less shared memory the registers are then not
/// capped for blocks that could never be resident.
constexpr int blur_fast_blocks_per_sm = std::max(
    1, std::min(6, fast::smem_per_sm_bytes() /
                       (4 * fast::channels * (fast::raw_plane + fast::rows_plane) + 1024)));

/// Op 5, the default shape (3 channels, radius 3, side a multiple of 32): 32 x 32 tiles of all
/// channels of one image, the same passes as the fused kernel's (fast:: in augment_device.cuh).
__global__ void __launch_bounds__(fast::threads, blur_fast_blocks_per_sm)
    augment_blur_fast(const __grid_constant__ staged_args a,
                      const augment_sample* __restrict__ samples, const float* __restrict__ rotated,
                      float* __restrict__ blurred, int tiles_x, int tiles_per_image) {
  using namespace fast;
  __shared__ __align__(16) float raw[channels * raw_plane];
  __shared__ __align__(16) float rows[channels * rows_plane];
  const int image = static_cast<int>(blockIdx.x) / tiles_per_image;
  const int tile = static_cast<int>(blockIdx.x) - image * tiles_per_image;
  const int tile_y = tile / tiles_x;
  const int x0 = (tile - tile_y * tiles_x) * tw;
  const int y0 = tile_y * th;
  const int t = static_cast<int>(threadIdx.x);
  float w[taps];
#pragma unroll
  for (int k = 0; k < taps; ++k) w[k] = samples[image].weights[k];
  const auto size = static_cast<std::size_t>(a.size);
  const std::size_t plane_px = size * size;
  const float* src = rotated + static_cast<std::size_t>(image) * channels * plane_px;
  // The tile's own columns, 16 bytes at a time (8 per halo row).
  for (int i = t; i < channels * halo_h * (tw / 4); i += fast::threads) {
    const int k = i % (tw / 4);
    const int row = i / (tw / 4); // channel * halo_h + halo row
    const int c = row / halo_h;
    const int gy = halo_coordinate(y0, row - c * halo_h, radius, a.size);
    const float4 v =
        __ldg(reinterpret_cast<const float4*>(src + static_cast<std::size_t>(c) * plane_px +
                                              static_cast<std::size_t>(gy) * size + x0 + 4 * k));
    *reinterpret_cast<float4*>(raw + row * raw_stride + radius + 1 + 4 * k) = v;
  }
  // The border columns, reflected (3 on each side).
  for (int i = t; i < channels * halo_h * 2 * radius; i += fast::threads) {
    const int k = i % (2 * radius);
    const int row = i / (2 * radius);
    const int c = row / halo_h;
    const int gy = halo_coordinate(y0, row - c * halo_h, radius, a.size);
    const int hx = k < radius ? k : tw + k;
    raw[row * raw_stride + hx + 1] =
        __ldg(src + static_cast<std::size_t>(c) * plane_px + static_cast<std::size_t>(gy) * size +
              halo_coordinate(x0, hx, radius, a.size));
  }
  __syncthreads();
  row_pass(raw, rows, w);
  __syncthreads();
  float* dst = blurred + static_cast<std::size_t>(image) * channels * plane_px;
  column_pass(rows, w, [&](int c, int ty, int tx, float4 v) {
    *reinterpret_cast<float4*>(dst + static_cast<std::size_t>(c) * plane_px +
                               static_cast<std::size_t>((y0 + ty) * a.size + x0 + tx)) = v;
  });
}

/// Op 6: normalize and convert to the output type; 4 values per thread when rows allow it.
template <typename Out>
__global__ void augment_normalize(const __grid_constant__ staged_args a,
                                  const float* __restrict__ blurred, Out* __restrict__ out) {
  const std::size_t planes = static_cast<std::size_t>(a.batch) * a.channels;
  const std::size_t plane_px = static_cast<std::size_t>(a.size) * static_cast<std::size_t>(a.size);
  const bool vector = plane_px % 4 == 0;
  const std::size_t per_thread = vector ? 4 : 1;
  const std::size_t i =
      (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * per_thread;
  if (i >= plane_px) return;
  for (std::size_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const auto c =
        static_cast<int>(static_cast<unsigned>(plane) % static_cast<unsigned>(a.channels));
    const float s = a.inv_std[c];
    const float o = normalize_offset(a.mean[c], s);
    const std::size_t at = plane * plane_px + i;
    if (vector) {
      store4(out + at, normalize4(*reinterpret_cast<const float4*>(blurred + at), s, o), true, 4);
    } else {
      out[at] = from_float<Out>(normalize1(blurred[at], s, o));
    }
  }
}

template <int R>
void launch_blur(const augment_shape& shape, const staged_args& a, const augment_sample* samples,
                 const float* rotated, float* blurred, cudaStream_t s) {
  const halo_shape hs(shape.radius);
  const int tiles_x = (shape.resize + tile_w - 1) / tile_w;
  const int tiles_per_image = tiles_x * ((shape.resize + tile_h - 1) / tile_h);
  const auto bytes_for = [&](int group) {
    return static_cast<int>(sizeof(float)) *
           (augment_max_blur + 1 + group * (hs.raw_floats() + hs.row_floats()));
  };
  const int limit = max_dynamic_shared_bytes();
  int group = std::min(shape.channels, max_channel_group);
  while (group > 1 && bytes_for(group) > limit) --group;
  if (bytes_for(group) > limit)
    throw cuda_error(cudaErrorInvalidValue,
                     "augment_blur: the blur tile needs more shared memory than the device has");
  const auto kernel = augment_blur<R>;
  allow_dynamic_shared_bytes(reinterpret_cast<const void*>(kernel), bytes_for(group));
  const auto blocks = static_cast<unsigned>(static_cast<long long>(shape.batch) * tiles_per_image);
  kernel<<<blocks, block_threads, static_cast<std::size_t>(bytes_for(group)), s>>>(
      a, samples, rotated, blurred, tiles_x, tiles_per_image, group);
  GPUBENCH_CHECK_LAUNCH("augment_blur");
}

} // namespace

void launch_augment_staged(const augment_shape& shape, const std::uint8_t* input,
                           const augment_sample* samples, const augment_staged_buffers& buffers,
                           void* out, cudaStream_t s) {
  if (shape.batch == 0) return;
  if (shape.out == dtype::f64) throw std::invalid_argument("augment: f64 output is not offered");
  staged_args a{};
  a.batch = shape.batch;
  fill_shape_args(a, shape);
  const std::size_t images = static_cast<std::size_t>(shape.batch) * shape.channels;
  const std::size_t in_n = images * shape.input_pixels();

  augment_to_float<<<grid_for((in_n + 3) / 4, threads), threads, 0, s>>>(input, buffers.full, in_n);
  GPUBENCH_CHECK_LAUNCH("augment_to_float");
  const dim3 crop_grid(
      static_cast<unsigned>((shape.crop + 4 * crop_block_x - 1) / (4 * crop_block_x)),
      static_cast<unsigned>((shape.crop + crop_block_y - 1) / crop_block_y),
      static_cast<unsigned>(
          std::min<std::size_t>(static_cast<std::size_t>(shape.batch), max_grid_z)));
  augment_crop<<<crop_grid, dim3(crop_block_x, crop_block_y), 0, s>>>(a, samples, buffers.full,
                                                                      buffers.cropped);
  GPUBENCH_CHECK_LAUNCH("augment_crop");
  const dim3 resize_grid(
      static_cast<unsigned>((shape.resize + 4 * resize_block_x - 1) / (4 * resize_block_x)),
      static_cast<unsigned>((shape.resize + resize_block_y - 1) / resize_block_y),
      static_cast<unsigned>(
          std::min<std::size_t>(static_cast<std::size_t>(shape.batch), max_grid_z)));
  augment_resize<<<resize_grid, dim3(resize_block_x, resize_block_y), 0, s>>>(a, buffers.cropped,
                                                                              buffers.resized);
  GPUBENCH_CHECK_LAUNCH("augment_resize");
  const dim3 rotate_grid(static_cast<unsigned>((shape.resize + rotate_tile_w - 1) / rotate_tile_w),
                         static_cast<unsigned>((shape.resize + rotate_tile_h - 1) / rotate_tile_h),
                         static_cast<unsigned>(std::min<std::size_t>(
                             static_cast<std::size_t>(shape.batch), max_grid_z)));
  const dim3 rotate_block(rotate_tile_w * rotate_step);
  if (shape.interp == augment_interp::nearest)
    augment_rotate<augment_interp::nearest>
        <<<rotate_grid, rotate_block, 0, s>>>(a, samples, buffers.resized, buffers.rotated);
  else
    augment_rotate<augment_interp::bilinear>
        <<<rotate_grid, rotate_block, 0, s>>>(a, samples, buffers.resized, buffers.rotated);
  GPUBENCH_CHECK_LAUNCH("augment_rotate");
  if (shape.channels == fast::channels && shape.radius == fast::radius &&
      shape.resize % fast::tw == 0) {
    const int tiles_x = shape.resize / fast::tw;
    const int tiles_per_image = tiles_x * (shape.resize / fast::th);
    const auto blocks =
        static_cast<unsigned>(static_cast<long long>(shape.batch) * tiles_per_image);
    augment_blur_fast<<<blocks, fast::threads, 0, s>>>(a, samples, buffers.rotated, buffers.blurred,
                                                       tiles_x, tiles_per_image);
    GPUBENCH_CHECK_LAUNCH("augment_blur");
  } else if (shape.radius == 3)
    launch_blur<3>(shape, a, samples, buffers.rotated, buffers.blurred, s);
  else
    launch_blur<-1>(shape, a, samples, buffers.rotated, buffers.blurred, s);
  const std::size_t plane_px = shape.output_pixels();
  const std::size_t per_plane = plane_px % 4 == 0 ? plane_px / 4 : plane_px;
  const dim3 grid(static_cast<unsigned>((per_plane + threads - 1) / threads), 1,
                  static_cast<unsigned>(std::min<std::size_t>(images, max_grid_z)));
  switch (shape.out) {
  case dtype::f16:
    augment_normalize<<<grid, threads, 0, s>>>(a, buffers.blurred, static_cast<__half*>(out));
    break;
  case dtype::bf16:
    augment_normalize<<<grid, threads, 0, s>>>(a, buffers.blurred,
                                               static_cast<__nv_bfloat16*>(out));
    break;
  case dtype::f32:
  case dtype::f64:
    augment_normalize<<<grid, threads, 0, s>>>(a, buffers.blurred, static_cast<float*>(out));
    break;
  }
  GPUBENCH_CHECK_LAUNCH("augment_normalize");
}

} // namespace gpubench::cuda
