#pragma once
// The augment pipeline (design section 4): the per-sample parameters and batch shape shared by the
// CPU reference and the kernels, the coordinate arithmetic both sides must do identically, and the
// launchers. Kernels live in augment_fused.cu and augment_staged.cu.
//
// Coordinates (rotation source positions, resize source positions, the rounding to a pixel) are
// computed by the inline functions below on the host and on the device alike, with every product
// and sum rounded separately (no fused multiply-add): that is what makes nearest sampling pick the
// same source pixel on both sides. Pixel values (interpolation, blur, normalize) may differ by a
// few rounding errors; the verification tolerance covers that (docs/augment.md).
#include "gpubench/dtype.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GPUBENCH_HD __host__ __device__
#else
#define GPUBENCH_HD
#endif

namespace gpubench {

inline constexpr int augment_max_blur = 31; ///< largest --blur (taps)
inline constexpr int augment_max_radius = augment_max_blur / 2;
inline constexpr int augment_max_channels = 16;
/// Output pixels per block of the fused kernel and the staged blur (width x height).
inline constexpr int augment_tile_w = 32;
inline constexpr int augment_tile_h = 64;

enum class augment_interp { nearest, bilinear };

/// Everything one sample's augmentation needs, drawn on the host (augment_params.hpp) and shared
/// by the CPU reference and the kernels, which read it from a small device array.
struct augment_sample {
  std::int32_t top = 0;                 ///< crop offset, rows
  std::int32_t left = 0;                ///< crop offset, columns
  float angle_deg = 0;                  ///< rotation, counter-clockwise positive
  float cos_a = 1;                      ///< cos(angle), rounded once to float on the host
  float sin_a = 0;                      ///< sin(angle)
  float sigma = 1;                      ///< blur sigma
  float weights[augment_max_blur] = {}; ///< normalized gaussian taps, 2 * radius + 1 used
};

/// The batch and the pipeline's fixed settings.
struct augment_shape {
  int batch = 0;
  int channels = 3;
  int height = 256; ///< input image
  int width = 256;
  int crop = 128;   ///< square crop
  int resize = 256; ///< square output side
  int radius = 3;   ///< blur radius: taps = 2 * radius + 1
  augment_interp interp = augment_interp::nearest;
  dtype out = dtype::f32;
  float scale = 0.5F; ///< crop / resize, the resize's source step (as PyTorch computes it)
  float mean[augment_max_channels] = {};
  float inv_std[augment_max_channels] = {}; ///< 1 / std, rounded once: normalize multiplies
  /// Fused fast path only: tiles each block handles down one tile column (1, 2, 4 or 8; it must
  /// divide resize / 32). 0 chooses from the batch and the device (see augment_fused.cu). The
  /// output does not depend on it; tests use it to cover every strip length.
  int fused_strip = 0;
  /// Fused fast path only: tile columns at the end of the grid that run one tile per block, so
  /// that the last wave is made of short blocks. -1 chooses (about one wave of them when strips
  /// are longer than 1; none when fused_strip is set); tests set it to cover both kinds of block
  /// in one launch.
  int fused_tail = -1;

  [[nodiscard]] std::size_t input_pixels() const noexcept {
    return static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  }
  [[nodiscard]] std::size_t output_pixels() const noexcept {
    return static_cast<std::size_t>(resize) * static_cast<std::size_t>(resize);
  }
};

namespace augment_math {

// Separately rounded float arithmetic. On the device the intrinsics forbid contraction into FMA;
// on the host the files that use these are compiled with -ffp-contract=off.
GPUBENCH_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUBENCH_HD inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUBENCH_HD inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

/// Round half to even (as std::nearbyint in the default mode and PyTorch's grid sampler).
GPUBENCH_HD inline int round_to_int(float x) {
#if defined(__CUDA_ARCH__)
  return __float2int_rn(x);
#else
  return static_cast<int>(std::nearbyint(x));
#endif
}

GPUBENCH_HD inline int floor_to_int(float x) {
#if defined(__CUDA_ARCH__)
  return static_cast<int>(floorf(x));
#else
  return static_cast<int>(std::floor(x));
#endif
}

/// Reflect-101 border (OpenCV BORDER_REFLECT_101, torch pad mode "reflect"): -1 -> 1, n -> n-2.
/// Valid for -n < i < 2n - 1, which the blur radius check (radius < n) guarantees.
GPUBENCH_HD inline int reflect101(int i, int n) {
  if (n == 1) return 0;
  if (i < 0) i = -i;
  if (i > n - 1) i = 2 * (n - 1) - i;
  return i;
}

/// Rotation centre of an n-pixel axis: (n - 1) / 2, exact in float.
GPUBENCH_HD inline float centre(int n) { return 0.5F * static_cast<float>(n - 1); }

/// Source position of output pixel (x, y) under a rotation by the angle whose cosine and sine are
/// given, about (cx, cy): xs = cos (x - cx) - sin (y - cy) + cx, ys = sin (x - cx) + cos (y - cy) +
/// cy. A positive angle turns the picture counter-clockwise on screen (y points down).
struct point2 {
  float x;
  float y;
};
GPUBENCH_HD inline point2 rotation_source(int x, int y, float cx, float cy, float cos_a,
                                          float sin_a) {
  const float dx = sub_rn(static_cast<float>(x), cx);
  const float dy = sub_rn(static_cast<float>(y), cy);
  return {add_rn(sub_rn(mul_rn(cos_a, dx), mul_rn(sin_a, dy)), cx),
          add_rn(add_rn(mul_rn(sin_a, dx), mul_rn(cos_a, dy)), cy)};
}

/// One axis of a bilinear resize with align_corners=false: output index d reads input i0 with
/// weight 1 - l1 and i1 with weight l1, at u = scale (d + 0.5) - 0.5 clamped below at 0, and
/// i1 = i0 + 1 clamped to the last input (PyTorch's upsample_bilinear2d).
struct resize_tap {
  int i0;
  int i1;
  float l1;
};
GPUBENCH_HD inline resize_tap resize_source(int d, float scale, int in_size) {
  float u = sub_rn(mul_rn(scale, add_rn(static_cast<float>(d), 0.5F)), 0.5F);
  if (u < 0.0F) u = 0.0F;
  int i0 = static_cast<int>(u); // u >= 0: truncation is floor
  if (i0 > in_size - 1) i0 = in_size - 1;
  const int i1 = i0 < in_size - 1 ? i0 + 1 : i0;
  return {i0, i1, sub_rn(u, static_cast<float>(i0))};
}

/// Image coordinate of index `i` of a blur halo that starts `radius` before `origin`, reflect-101
/// at the border. Indices past what any output of an n-pixel axis needs are clamped first, so the
/// reflection stays valid for tiles that overhang the image.
GPUBENCH_HD inline int halo_coordinate(int origin, int i, int radius, int n) {
  int g = origin - radius + i;
  if (g > n - 1 + radius) g = n - 1 + radius;
  return reflect101(g, n);
}

/// Inclusive window of crop pixels (crop coordinates).
struct crop_window {
  int x0 = 0;
  int x1 = -1;
  int y0 = 0;
  int y1 = -1;
  [[nodiscard]] GPUBENCH_HD bool empty() const { return x1 < x0 || y1 < y0; }
  [[nodiscard]] GPUBENCH_HD int width() const { return x1 - x0 + 1; }
  [[nodiscard]] GPUBENCH_HD int height() const { return y1 - y0 + 1; }
};

/// Inclusive range of resized pixels (resized coordinates); empty when x1 < x0 or y1 < y0.
struct resized_range {
  int x0;
  int x1;
  int y0;
  int y1;
  [[nodiscard]] GPUBENCH_HD bool empty() const { return x1 < x0 || y1 < y0; }
};

/// The resized pixels that rotated samples at output positions [xa, xb] x [ya, yb] of a size x
/// size output can read (nearest or bilinear): the rotation is affine, so the corners bound the
/// source positions; one resized pixel of margin on each side absorbs rounding.
GPUBENCH_HD inline resized_range tile_resized_reach(int xa, int xb, int ya, int yb, int size,
                                                    float cos_a, float sin_a) {
  const float c = centre(size);
  const point2 p00 = rotation_source(xa, ya, c, c, cos_a, sin_a);
  const point2 p01 = rotation_source(xb, ya, c, c, cos_a, sin_a);
  const point2 p10 = rotation_source(xa, yb, c, c, cos_a, sin_a);
  const point2 p11 = rotation_source(xb, yb, c, c, cos_a, sin_a);
  const auto lo = [](float a, float b, float d, float e) {
    const float ab = a < b ? a : b;
    const float de = d < e ? d : e;
    return ab < de ? ab : de;
  };
  const auto hi = [](float a, float b, float d, float e) {
    const float ab = a > b ? a : b;
    const float de = d > e ? d : e;
    return ab > de ? ab : de;
  };
  // Far outside (|x| >= 2^24) nothing is read anyway; keep the integer conversions defined.
  const auto bounded = [](float v) { return v < -1e7F ? -1e7F : (v > 1e7F ? 1e7F : v); };
  resized_range r{floor_to_int(bounded(lo(p00.x, p01.x, p10.x, p11.x))) - 1,
                  floor_to_int(bounded(hi(p00.x, p01.x, p10.x, p11.x))) + 2,
                  floor_to_int(bounded(lo(p00.y, p01.y, p10.y, p11.y))) - 1,
                  floor_to_int(bounded(hi(p00.y, p01.y, p10.y, p11.y))) + 2};
  r.x0 = r.x0 < 0 ? 0 : r.x0;
  r.y0 = r.y0 < 0 ? 0 : r.y0;
  r.x1 = r.x1 > size - 1 ? size - 1 : r.x1;
  r.y1 = r.y1 > size - 1 ? size - 1 : r.y1;
  return r;
}

/// The crop pixels behind a range of resized pixels: resize taps are monotonic in the output
/// index, so the range's end taps bound them.
GPUBENCH_HD inline crop_window source_window(const resized_range& r, float scale, int crop) {
  crop_window w;
  if (r.empty()) return w;
  w.x0 = resize_source(r.x0, scale, crop).i0;
  w.x1 = resize_source(r.x1, scale, crop).i1;
  w.y0 = resize_source(r.y0, scale, crop).i0;
  w.y1 = resize_source(r.y1, scale, crop).i1;
  return w;
}

/// The crop pixels the tile's samples can read: the window the fused kernel stages in shared
/// memory (and checks every sample against anyway).
GPUBENCH_HD inline crop_window tile_source_window(int xa, int xb, int ya, int yb, int size,
                                                  int crop, float scale, float cos_a, float sin_a) {
  return source_window(tile_resized_reach(xa, xb, ya, yb, size, cos_a, sin_a), scale, crop);
}

/// Linear interpolation a + t (b - a). The device fuses the multiply-add; values may therefore
/// differ from the host's in the last bits, never in which pixels are read.
GPUBENCH_HD inline float lerp(float a, float b, float t) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(t, b - a, a);
#else
  return a + t * (b - a);
#endif
}

/// acc + w * v, fused on the device.
GPUBENCH_HD inline float mac(float acc, float w, float v) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(w, v, acc);
#else
  return acc + w * v;
#endif
}

} // namespace augment_math

namespace cuda {

/// Device pointers of the staged implementation's intermediates, each a full batch.
struct augment_staged_buffers {
  float* full = nullptr;    ///< op 1: batch x C x H x W
  float* cropped = nullptr; ///< op 2: batch x C x crop x crop
  float* resized = nullptr; ///< op 3: batch x C x S x S
  float* rotated = nullptr; ///< op 4
  float* blurred = nullptr; ///< op 5
};

/// Bytes the staged implementation reads and writes, kernel by kernel (each input read once, each
/// output written once), for the shape's batch.
struct augment_staged_traffic {
  double to_float = 0;
  double crop = 0;
  double resize = 0;
  double rotate = 0;
  double blur = 0;
  double normalize = 0;
  [[nodiscard]] double total() const noexcept {
    return to_float + crop + resize + rotate + blur + normalize;
  }
};
augment_staged_traffic augment_staged_bytes(const augment_shape& shape) noexcept;

/// Floating-point operations of the pixel arithmetic, op by op, for the shape's batch: what both
/// implementations compute per output value (docs/augment.md). A bilinear sample is three lerps of
/// a subtraction and a multiply-add each (9 FLOPs; nearest sampling reads, 0); the separable blur
/// a multiply-add per tap and pass (4 x taps); the normalization one multiply-add (2). Converting
/// bytes, cropping and the coordinate arithmetic are not counted.
struct augment_op_flops {
  double resize = 0;
  double rotate = 0;
  double blur = 0;
  double normalize = 0;
  [[nodiscard]] double total() const noexcept { return resize + rotate + blur + normalize; }
};
augment_op_flops augment_flops(const augment_shape& shape) noexcept;

/// Least bytes the fused implementation must move: the crop regions in, the outputs out.
double augment_fused_bytes(const augment_shape& shape) noexcept;

/// Device bytes each implementation needs besides the uint8 input and the parameters.
std::size_t augment_staged_device_bytes(const augment_shape& shape) noexcept;
std::size_t augment_output_bytes(const augment_shape& shape) noexcept;

/// Staged: one kernel per op (to float, crop, resize, rotate, blur, normalize), intermediates in
/// `buffers`; `out` is batch x C x S x S of shape.out. All enqueued on `s`.
void launch_augment_staged(const augment_shape& shape, const std::uint8_t* input,
                           const augment_sample* samples, const augment_staged_buffers& buffers,
                           void* out, cudaStream_t s);

/// Fused: one kernel for the whole batch. Reads only the crop regions of `input`, composes crop,
/// resize and rotation into one inverse map, blurs a tile with its border in shared memory,
/// normalizes and stores `out` (batch x C x S x S of shape.out).
void launch_augment_fused(const augment_shape& shape, const std::uint8_t* input,
                          const augment_sample* samples, void* out, cudaStream_t s);

} // namespace cuda
} // namespace gpubench
