// CPU reference of the augment pipeline. Compiled with -ffp-contract=off (lib/CMakeLists.txt) so
// that the coordinate arithmetic shared with the kernels (gpubench/cuda/augment.hpp) is rounded
// operation by operation, exactly as the kernels do it.
#include "gpubench/augment/augment_cpu.hpp"

#include "gpubench/core/half.hpp"
#include "gpubench/engine/check_elements.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace gpubench::augment_cpu {

namespace am = augment_math;

void to_float(const std::uint8_t* src, std::size_t n, float* dst) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

void crop(const float* src, int h, int w, int top, int left, int ch, int cw, float* dst) {
  (void)h;
  for (int y = 0; y < ch; ++y) {
    const float* row = src + static_cast<std::size_t>(top + y) * static_cast<std::size_t>(w) +
                       static_cast<std::size_t>(left);
    std::copy(row, row + cw, dst + static_cast<std::size_t>(y) * static_cast<std::size_t>(cw));
  }
}

void resize_bilinear(const float* src, int h, int w, float* dst, int oh, int ow) {
  const float scale_x = static_cast<float>(w) / static_cast<float>(ow);
  const float scale_y = static_cast<float>(h) / static_cast<float>(oh);
  std::vector<am::resize_tap> xs(static_cast<std::size_t>(ow));
  for (int x = 0; x < ow; ++x) xs[static_cast<std::size_t>(x)] = am::resize_source(x, scale_x, w);
  for (int y = 0; y < oh; ++y) {
    const am::resize_tap ty = am::resize_source(y, scale_y, h);
    const float* r0 = src + static_cast<std::size_t>(ty.i0) * static_cast<std::size_t>(w);
    const float* r1 = src + static_cast<std::size_t>(ty.i1) * static_cast<std::size_t>(w);
    float* out = dst + static_cast<std::size_t>(y) * static_cast<std::size_t>(ow);
    for (int x = 0; x < ow; ++x) {
      const am::resize_tap tx = xs[static_cast<std::size_t>(x)];
      const float top = am::lerp(r0[tx.i0], r0[tx.i1], tx.l1);
      const float bottom = am::lerp(r1[tx.i0], r1[tx.i1], tx.l1);
      out[x] = am::lerp(top, bottom, ty.l1);
    }
  }
}

void rotate(const float* src, int h, int w, float cos_a, float sin_a, augment_interp interp,
            float* dst) {
  const float cx = am::centre(w);
  const float cy = am::centre(h);
  const auto at = [&](int x, int y) {
    return (x < 0 || x >= w || y < 0 || y >= h)
               ? 0.0F
               : src[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) +
                     static_cast<std::size_t>(x)];
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const am::point2 p = am::rotation_source(x, y, cx, cy, cos_a, sin_a);
      float v = 0;
      if (interp == augment_interp::nearest) {
        v = at(am::round_to_int(p.x), am::round_to_int(p.y));
      } else {
        const int x0 = am::floor_to_int(p.x);
        const int y0 = am::floor_to_int(p.y);
        const float fx = am::sub_rn(p.x, static_cast<float>(x0));
        const float fy = am::sub_rn(p.y, static_cast<float>(y0));
        const float top = am::lerp(at(x0, y0), at(x0 + 1, y0), fx);
        const float bottom = am::lerp(at(x0, y0 + 1), at(x0 + 1, y0 + 1), fx);
        v = am::lerp(top, bottom, fy);
      }
      dst[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x)] =
          v;
    }
}

void blur(const float* src, int h, int w, const float* weights, int radius, float* dst,
          float* scratch) {
  const auto uw = static_cast<std::size_t>(w);
  // Rows: every output starts at 0 and adds the taps in order, as the kernels do.
  for (int y = 0; y < h; ++y) {
    const float* row = src + static_cast<std::size_t>(y) * uw;
    float* out = scratch + static_cast<std::size_t>(y) * uw;
    std::fill(out, out + w, 0.0F);
    const int lo = std::min(radius, w);
    const int hi = std::max(lo, w - radius);
    for (int k = 0; k <= 2 * radius; ++k) {
      const float wk = weights[k];
      for (int x = 0; x < lo; ++x)
        out[x] = am::mac(out[x], wk, row[am::reflect101(x + k - radius, w)]);
      const float* shifted = row + (k - radius);
      for (int x = lo; x < hi; ++x) out[x] = am::mac(out[x], wk, shifted[x]);
      for (int x = hi; x < w; ++x)
        out[x] = am::mac(out[x], wk, row[am::reflect101(x + k - radius, w)]);
    }
  }
  // Columns.
  for (int y = 0; y < h; ++y) {
    float* out = dst + static_cast<std::size_t>(y) * uw;
    std::fill(out, out + w, 0.0F);
    for (int k = 0; k <= 2 * radius; ++k) {
      const float wk = weights[k];
      const float* in = scratch + static_cast<std::size_t>(am::reflect101(y + k - radius, h)) * uw;
      for (int x = 0; x < w; ++x) out[x] = am::mac(out[x], wk, in[x]);
    }
  }
}

void normalize(float* plane, std::size_t n, float mean, float inv_std) {
  for (std::size_t i = 0; i < n; ++i) plane[i] = (plane[i] - mean) * inv_std;
}

void augment_image(const std::uint8_t* image, const augment_shape& shape,
                   const augment_sample& sample, float* out) {
  const std::size_t in_plane = shape.input_pixels();
  const std::size_t out_plane = shape.output_pixels();
  const std::size_t crop_plane =
      static_cast<std::size_t>(shape.crop) * static_cast<std::size_t>(shape.crop);
  thread_local std::vector<float> full;
  thread_local std::vector<float> cropped;
  thread_local std::vector<float> resized;
  thread_local std::vector<float> rotated;
  thread_local std::vector<float> scratch;
  full.resize(in_plane);
  cropped.resize(crop_plane);
  resized.resize(out_plane);
  rotated.resize(out_plane);
  scratch.resize(out_plane);
  const int s = shape.resize;
  for (int c = 0; c < shape.channels; ++c) {
    float* dst = out + static_cast<std::size_t>(c) * out_plane;
    to_float(image + static_cast<std::size_t>(c) * in_plane, in_plane, full.data());
    crop(full.data(), shape.height, shape.width, sample.top, sample.left, shape.crop, shape.crop,
         cropped.data());
    resize_bilinear(cropped.data(), shape.crop, shape.crop, resized.data(), s, s);
    rotate(resized.data(), s, s, sample.cos_a, sample.sin_a, shape.interp, rotated.data());
    blur(rotated.data(), s, s, sample.weights, shape.radius, dst, scratch.data());
    normalize(dst, out_plane, shape.mean[c], shape.inv_std[c]);
  }
}

void augment_batch(const std::uint8_t* input, const augment_shape& shape,
                   std::span<const augment_sample> samples, float* out, thread_pool& pool) {
  const std::size_t in_image = static_cast<std::size_t>(shape.channels) * shape.input_pixels();
  const std::size_t out_image = static_cast<std::size_t>(shape.channels) * shape.output_pixels();
  pool.parallel_for(static_cast<std::size_t>(shape.batch), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      augment_image(input + i * in_image, shape, samples[i], out + i * out_image);
  });
}

std::string tolerance_rule(dtype out) {
  const char* rel = out == dtype::f16    ? " + 2^-11 |ref|"
                    : out == dtype::bf16 ? " + 2^-8 |ref|"
                                         : "";
  return fmt::format("|got - ref| <= {:g} / std{} on >= {:g}% of elements, none non-finite",
                     abs_tolerance, rel, required_share * 100.0);
}

namespace {

float load_output(dtype t, const void* p, std::size_t i) {
  switch (t) {
  case dtype::f16: return half_to_float(static_cast<const std::uint16_t*>(p)[i]);
  case dtype::bf16: return bf16_to_float(static_cast<const std::uint16_t*>(p)[i]);
  case dtype::f64: return static_cast<float>(static_cast<const double*>(p)[i]);
  case dtype::f32: break;
  }
  return static_cast<const float*>(p)[i];
}

} // namespace

verification check_against(const augment_shape& shape, const float* ref,
                           const std::function<float(std::size_t)>& got_at, double abs_per_std,
                           double rel, std::string method, double share, thread_pool& pool) {
  const std::size_t plane = shape.output_pixels();
  const auto channels = static_cast<std::size_t>(shape.channels);
  const std::size_t n = static_cast<std::size_t>(shape.batch) * channels * plane;
  verification v;
  v.method = std::move(method);
  v.tolerance = abs_per_std;
  const auto checked = check_elements(n, pool, v, [&](std::size_t i) {
    const auto c = (i / plane) % channels;
    const double r = ref[i];
    const double g = got_at(i);
    // A NaN or infinity on either side is a mismatch, never within tolerance: a reference gone
    // non-finite (a blur of sigma 0) must not let matching NaN output pass.
    if (!std::isfinite(g) || !std::isfinite(r)) return element_outcome{0, false, true};
    const double tol =
        abs_per_std * std::fabs(static_cast<double>(shape.inv_std[c])) + rel * std::fabs(r);
    const double err = std::fabs(g - r);
    return element_outcome{err, err <= tol};
  });
  record_verdict(v, checked, shape, ref, got_at, share);
  return v;
}

verification check_output(const augment_shape& shape, const float* ref, const void* got,
                          thread_pool& pool) {
  const double rel = shape.out == dtype::f16 ? 0x1p-11 : shape.out == dtype::bf16 ? 0x1p-8 : 0.0;
  return check_against(
      shape, ref, [&](std::size_t i) { return load_output(shape.out, got, i); }, abs_tolerance, rel,
      tolerance_rule(shape.out), required_share, pool);
}

void record_verdict(verification& v, const element_check& checked, const augment_shape& shape,
                    const float* ref, const std::function<float(std::size_t)>& got_at,
                    double share) {
  const std::size_t plane = shape.output_pixels();
  const auto channels = static_cast<std::size_t>(shape.channels);
  v.passed = checked.non_finite == 0 && v.within_tolerance_fraction() >= share;
  v.details["within_tolerance_fraction"] = v.within_tolerance_fraction();
  v.details["non_finite"] = checked.non_finite;
  if (checked.first_bad) {
    const std::size_t i = *checked.first_bad;
    const std::size_t pix = i % plane;
    const float got = got_at(i);
    v.details["first_mismatch"] = {{"image", i / (plane * channels)},
                                   {"channel", (i / plane) % channels},
                                   {"y", pix / static_cast<std::size_t>(shape.resize)},
                                   {"x", pix % static_cast<std::size_t>(shape.resize)},
                                   {"expected", ref[i]},
                                   {"got", std::isfinite(got) ? got : 0.0F},
                                   {"got_finite", std::isfinite(got)}};
  }
}

} // namespace gpubench::augment_cpu
