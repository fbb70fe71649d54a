#pragma once
// The OpenCV baseline of the augment pipeline: the same ops and per-sample parameters as the float
// reference (augment_cpu.hpp), written as a CPU user would with OpenCV's C++ API (crop as a view,
// cv::resize, cv::warpAffine, a separable Gaussian with the image's taps), uint8 through the
// geometric ops and float32 from the blur on. OpenCV is optional: without it (a build that did not
// find it, or the pip wheel) every entry point but the queries throws, and the benchmarks report
// the row as absent.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/results/result.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace gpubench::augment_opencv {

/// Whether this binary was built with OpenCV (lib/CMakeLists.txt).
/// GPUBENCH_TEST_PRETEND_NO_OPENCV=1 makes a build with OpenCV answer false, for the tests of the
/// path without it.
[[nodiscard]] bool built_in() noexcept;
/// The version of the OpenCV library loaded ("4.6.0"); empty when not built in.
[[nodiscard]] std::string version();
/// "built in (OpenCV 4.6.0, core and imgproc; parallel framework: TBB ...)" or "not built in".
[[nodiscard]] std::string description();
/// Why the OpenCV row is absent, for a result and the summary (only when !built_in()).
[[nodiscard]] std::string absence_reason();

/// How a batch is spread over the threads: one image per task on gpubench's pool with OpenCV
/// single-threaded inside (the default, measured faster), or the images one after another with
/// each OpenCV call parallel on OpenCV's own pool of the same size
/// (GPUBENCH_TEST_OPENCV_THREADING=opencv, kept to measure the alternative).
enum class threading { per_image, opencv_pool };
[[nodiscard]] threading threading_in_use();
/// One line for the measurement's description: the threads, the formulation and the layout.
[[nodiscard]] std::string row_description(int threads);

/// The whole pipeline on a batch of planar uint8 images (batch x C x H x W) into float32 NCHW
/// outputs (batch x C x S x S), normalized. Throws invalid_argument when not built in.
void augment_batch(const std::uint8_t* input, const augment_shape& shape,
                   std::span<const augment_sample> samples, float* out, thread_pool& pool);

/// Verification against the float reference: |got - ref| <= tolerance(interp) / std[c] on at
/// least required_share of the elements, none non-finite. The bounds (docs/augment.md): OpenCV's
/// uint8 resize rounds each value to an integer (within 0.625 of the float value, measured) and
/// the blur is a weighted mean, so a whole uint8 level covers it; warpAffine computes source
/// positions in fixed point (1/1024 of a pixel), so a nearest sample within that of a half-integer
/// can take the neighbouring pixel, and bilinear weights are quantized to 1/32. Those pixels are
/// the allowed share.
[[nodiscard]] double tolerance(augment_interp interp) noexcept;
inline constexpr double required_share = 0.995;
[[nodiscard]] std::string tolerance_rule(augment_interp interp);
/// Compares float32 outputs (batch x C x S x S) element by element under that rule.
verification check_output(const augment_shape& shape, const float* ref, const float* got,
                          thread_pool& pool);

} // namespace gpubench::augment_opencv
