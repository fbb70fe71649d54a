#pragma once
// CPU reference of the augment pipeline: ops 1 to 6 of design section 4 applied stage by stage in
// float32, one image per task on the thread pool. Each op is exposed on single-channel planes
// (row-major, height x width) so that it can be tested on small hand-checked cases.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/engine/check_elements.hpp"
#include "gpubench/results/result.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace gpubench::augment_cpu {

/// Op 1: uint8 to float32, no scaling.
void to_float(const std::uint8_t* src, std::size_t n, float* dst);

/// Op 2: the ch x cw window at (top, left) of an h x w plane (exact integer crop).
void crop(const float* src, int h, int w, int top, int left, int ch, int cw, float* dst);

/// Op 3: bilinear resize h x w -> oh x ow, align_corners=false (half-pixel centres), edge clamp.
void resize_bilinear(const float* src, int h, int w, float* dst, int oh, int ow);

/// Op 4: rotation about ((w-1)/2, (h-1)/2) by the angle with the given cosine and sine, positive =
/// counter-clockwise on screen; samples outside the plane read 0; output the same size.
void rotate(const float* src, int h, int w, float cos_a, float sin_a, augment_interp interp,
            float* dst);

/// Op 5: separable blur with the 2 * radius + 1 `weights`, rows first, reflect-101 border.
/// `scratch` holds h * w floats.
void blur(const float* src, int h, int w, const float* weights, int radius, float* dst,
          float* scratch);

/// Op 6: (v - mean) * inv_std in place.
void normalize(float* plane, std::size_t n, float mean, float inv_std);

/// The whole pipeline on one image (C x H x W uint8) into C x S x S floats.
void augment_image(const std::uint8_t* image, const augment_shape& shape,
                   const augment_sample& sample, float* out);

/// The whole pipeline on a batch, images spread over the pool.
void augment_batch(const std::uint8_t* input, const augment_shape& shape,
                   std::span<const augment_sample> samples, float* out, thread_pool& pool);

/// Verification rule: |got - ref| <= (abs_tolerance + rel |ref|) for channel c, where the
/// absolute part is abs_tolerance * inv_std[c] (errors arise before normalize) and rel is the
/// rounding of the output dtype (0 for f32, 2^-11 for f16, 2^-8 for bf16).
inline constexpr double abs_tolerance = 1e-3;
inline constexpr double required_share = 0.9999; ///< of elements within tolerance to pass
std::string tolerance_rule(dtype out);

/// The verdict of an element check of a batch x C x S x S output against the float reference:
/// passed when nothing is non-finite and at least `share` of the elements are within tolerance;
/// the details name the first mismatch by image, channel, y and x (`got_at(i)` reads element i of
/// the output as float).
void record_verdict(verification& v, const element_check& checked, const augment_shape& shape,
                    const float* ref, const std::function<float(std::size_t)>& got_at,
                    double share);

/// Checks every element of a batch x C x S x S output (`got_at(i)` reads element i as float)
/// against the float reference: within tolerance when |got - ref| <= abs_per_std * inv_std[c] +
/// rel * |ref|, a non-finite value on either side a mismatch; then record_verdict with `share`.
/// The GPU outputs' check and the OpenCV baseline's differ only in these numbers and the method.
verification check_against(const augment_shape& shape, const float* ref,
                           const std::function<float(std::size_t)>& got_at, double abs_per_std,
                           double rel, std::string method, double share, thread_pool& pool);

/// Compares a GPU output (batch x C x S x S of shape.out) with the float reference, every element.
verification check_output(const augment_shape& shape, const float* ref, const void* got,
                          thread_pool& pool);

} // namespace gpubench::augment_cpu
