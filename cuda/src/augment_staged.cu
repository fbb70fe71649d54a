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

struct staged_args {
  int batch;
  int channels;
  int height;
  int width;
  int crop;
  int size;
  int radius;
  float scale;
  float centre;
  float mean[augment_max_channels];
  float inv_std[augment_max_channels];
};

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

// Ops 2 to 4 and 6 use 64 x 4 thread blocks over (x, y) of one plane or image, blockIdx.z (striding
// by gridDim.z) over planes or images: no per-element integer division.
constexpr int block_x = 64;
constexpr int block_y = 4;
constexpr unsigned max_grid_z = 65535;

dim3 plane_grid(int w, int h, std::size_t planes) {
  return {static_cast<unsigned>((w + block_x - 1) / block_x),
          static_cast<unsigned>((h + block_y - 1) / block_y),
          static_cast<unsigned>(std::min<std::size_t>(planes, max_grid_z))};
}

__device__ __forceinline__ int plane_x() {
  return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
}
__device__ __forceinline__ int plane_y() {
  return static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
}

/// Op 2: each sample's crop window.
__global__ void augment_crop(const __grid_constant__ staged_args a,
                             const augment_sample* __restrict__ samples,
                             const float* __restrict__ full, float* __restrict__ cropped) {
  const int x = plane_x();
  const int y = plane_y();
  if (x >= a.crop || y >= a.crop) return;
  const std::size_t planes = static_cast<std::size_t>(a.batch) * a.channels;
  const std::size_t crop_px = static_cast<std::size_t>(a.crop) * static_cast<std::size_t>(a.crop);
  for (std::size_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const augment_sample& sp =
        samples[static_cast<unsigned>(plane) / static_cast<unsigned>(a.channels)];
    cropped[plane * crop_px + static_cast<std::size_t>(y) * a.crop + x] =
        full[(plane * a.height + static_cast<std::size_t>(sp.top + y)) * a.width +
             static_cast<std::size_t>(sp.left + x)];
  }
}

/// Op 3: bilinear resize of every crop. A thread owns 4 adjacent outputs of one row (one 16-byte
/// store when the row allows it) of every channel of one image; the taps are computed once.
constexpr int resize_block_x = 64; ///< threads along x: 256 outputs
constexpr int resize_block_y = 4;

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

/// Op 4: rotation, one thread per output pixel, channels in a loop.
template <augment_interp Interp>
__global__ void augment_rotate(const __grid_constant__ staged_args a,
                               const augment_sample* __restrict__ samples,
                               const float* __restrict__ resized, float* __restrict__ rotated) {
  const int x = plane_x();
  const int y = plane_y();
  const int s = a.size;
  if (x >= s || y >= s) return;
  const auto size = static_cast<std::size_t>(s);
  const std::size_t plane_px = size * size;
  const auto at = [&](const float* src, int xr, int yr) {
    return (static_cast<unsigned>(xr) < static_cast<unsigned>(s) &&
            static_cast<unsigned>(yr) < static_cast<unsigned>(s))
               ? src[static_cast<std::size_t>(yr) * size + static_cast<std::size_t>(xr)]
               : 0.0F;
  };
  for (std::size_t image = blockIdx.z; image < static_cast<std::size_t>(a.batch);
       image += gridDim.z) {
    const augment_sample& sp = samples[image];
    const am::point2 p = am::rotation_source(x, y, a.centre, a.centre, sp.cos_a, sp.sin_a);
    for (int c = 0; c < a.channels; ++c) {
      const std::size_t plane = image * a.channels + c;
      const float* src = resized + plane * plane_px;
      float v = 0;
      if constexpr (Interp == augment_interp::nearest) {
        v = at(src, am::round_to_int(p.x), am::round_to_int(p.y));
      } else {
        const int x0 = am::floor_to_int(p.x);
        const int y0 = am::floor_to_int(p.y);
        const float fx = am::sub_rn(p.x, static_cast<float>(x0));
        const float fy = am::sub_rn(p.y, static_cast<float>(y0));
        v = am::lerp(am::lerp(at(src, x0, y0), at(src, x0 + 1, y0), fx),
                     am::lerp(at(src, x0, y0 + 1), at(src, x0 + 1, y0 + 1), fx), fy);
      }
      rotated[plane * plane_px + static_cast<std::size_t>(y) * size + x] = v;
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
  [[maybe_unused]] float w[R >= 0 ? 2 * R + 1 : 1];
  const float* wp = weights;
  if constexpr (R >= 0) {
#pragma unroll
    for (int k = 0; k <= 2 * R; ++k) w[k] = weights[k];
    wp = w;
  }

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
    blur_tile<R>(raw, rows, group, hs, wp, [&](int c, int ty, int tx, float4 v) {
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

/// Op 5, the default shape (3 channels, radius 3, side a multiple of 32): 32 x 32 tiles of all
/// channels of one image, the same passes as the fused kernel's (fast:: in augment_device.cuh).
__global__ void __launch_bounds__(fast::threads, 6)
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
    const float m = a.mean[c];
    const float s = a.inv_std[c];
    const std::size_t at = plane * plane_px + i;
    if (vector) {
      float4 v = *reinterpret_cast<const float4*>(blurred + at);
      v = make_float4(am::mul_rn(am::sub_rn(v.x, m), s), am::mul_rn(am::sub_rn(v.y, m), s),
                      am::mul_rn(am::sub_rn(v.z, m), s), am::mul_rn(am::sub_rn(v.w, m), s));
      store4(out + at, v, true, 4);
    } else {
      out[at] = from_float<Out>(am::mul_rn(am::sub_rn(blurred[at], m), s));
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
  const std::size_t images = static_cast<std::size_t>(shape.batch) * shape.channels;
  const std::size_t in_n = images * shape.input_pixels();

  augment_to_float<<<grid_for((in_n + 3) / 4, threads), threads, 0, s>>>(input, buffers.full, in_n);
  GPUBENCH_CHECK_LAUNCH("augment_to_float");
  const dim3 block(block_x, block_y);
  augment_crop<<<plane_grid(shape.crop, shape.crop, images), block, 0, s>>>(
      a, samples, buffers.full, buffers.cropped);
  GPUBENCH_CHECK_LAUNCH("augment_crop");
  const dim3 per_image =
      plane_grid(shape.resize, shape.resize, static_cast<std::size_t>(shape.batch));
  const dim3 resize_grid(
      static_cast<unsigned>((shape.resize + 4 * resize_block_x - 1) / (4 * resize_block_x)),
      static_cast<unsigned>((shape.resize + resize_block_y - 1) / resize_block_y),
      static_cast<unsigned>(
          std::min<std::size_t>(static_cast<std::size_t>(shape.batch), max_grid_z)));
  augment_resize<<<resize_grid, dim3(resize_block_x, resize_block_y), 0, s>>>(a, buffers.cropped,
                                                                              buffers.resized);
  GPUBENCH_CHECK_LAUNCH("augment_resize");
  if (shape.interp == augment_interp::nearest)
    augment_rotate<augment_interp::nearest>
        <<<per_image, block, 0, s>>>(a, samples, buffers.resized, buffers.rotated);
  else
    augment_rotate<augment_interp::bilinear>
        <<<per_image, block, 0, s>>>(a, samples, buffers.resized, buffers.rotated);
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
