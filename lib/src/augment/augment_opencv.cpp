// The OpenCV baseline of augment (docs/augment.md, "OpenCV baseline"). Per image and per group of
// up to 4 channels: the planar crop windows are merged into one interleaved uint8 crop (a 128 x
// 128 x 3 copy), resized and rotated interleaved, so that warpAffine computes each source position
// once for all channels, split back into uint8 planes, and each plane is blurred from uint8 into
// float32 (normalize folded in) straight into its plane of the NCHW output.
#include "gpubench/augment/augment_opencv.hpp"

#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/environment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <vector>

#ifndef GPUBENCH_HAVE_OPENCV
#define GPUBENCH_HAVE_OPENCV 0 // lib/CMakeLists.txt defines it
#endif
#if GPUBENCH_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace gpubench::augment_opencv {

bool built_in() noexcept {
  return GPUBENCH_HAVE_OPENCV != 0 && !process_environment().pretend_no_opencv;
}

std::string absence_reason() {
  if (GPUBENCH_HAVE_OPENCV != 0)
    return "not built in (GPUBENCH_TEST_PRETEND_NO_OPENCV=1 hides the OpenCV this build has)";
  return "not built in (this gpubench was built without OpenCV, as the pip wheel is; a source "
         "build with libopencv-core-dev and libopencv-imgproc-dev has it)";
}

threading threading_in_use() {
  return process_environment().opencv_pool_threading ? threading::opencv_pool
                                                     : threading::per_image;
}

double tolerance(augment_interp interp) noexcept {
  return interp == augment_interp::nearest ? 1.0 : 2.0;
}

std::string tolerance_rule(augment_interp interp) {
  return fmt::format("|opencv - ref| <= {:g} / std on >= {:g}% of elements, none non-finite",
                     tolerance(interp), required_share * 100.0);
}

verification check_output(const augment_shape& shape, const float* ref, const float* got,
                          thread_pool& pool) {
  return augment_cpu::check_against(
      shape, ref, [&](std::size_t i) { return got[i]; }, tolerance(shape.interp), 0.0,
      tolerance_rule(shape.interp), required_share, pool);
}

#if GPUBENCH_HAVE_OPENCV

std::string version() { return built_in() ? cv::getVersionString() : std::string(); }

std::string description() {
  if (!built_in()) return "not built in";
  // The parallel framework, from the build information's "Parallel framework: TBB (...)" line.
  const std::string& info = cv::getBuildInformation();
  std::string framework = "unknown";
  if (const auto at = info.find("Parallel framework:"); at != std::string::npos) {
    const auto begin = info.find_first_not_of(' ', at + 19);
    framework = info.substr(begin, info.find('\n', begin) - begin);
  }
  return fmt::format("built in (OpenCV {}, core and imgproc; parallel framework {})",
                     cv::getVersionString(), framework);
}

std::string row_description(int threads) {
  const std::string spread =
      threading_in_use() == threading::per_image
          ? fmt::format("{} threads, one image per task, OpenCV single-threaded inside", threads)
          : fmt::format("one image at a time, each OpenCV call on OpenCV's pool of {} threads",
                        threads);
  return fmt::format(
      "OpenCV {}, {}: crop as a view, planes merged to interleaved uint8, resize (INTER_LINEAR) "
      "and warpAffine (zero border) on uint8, split to planes, separable Gaussian (sepFilter2D, "
      "the image's taps, reflect-101) from uint8 into the float32 NCHW output, normalize folded "
      "in",
      cv::getVersionString(), spread);
}

namespace {

/// warpAffine's matrix with WARP_INVERSE_MAP: output (x, y) reads the source position of
/// augment_math::rotation_source, about ((n - 1) / 2, (n - 1) / 2), from the same rounded cosine
/// and sine the reference uses.
cv::Matx23d output_to_source(const augment_sample& s, int n) {
  const double c = 0.5 * static_cast<double>(n - 1);
  const double cs = s.cos_a;
  const double sn = s.sin_a;
  return {cs, -sn, c - cs * c + sn * c, sn, cs, c - sn * c - cs * c};
}

/// Per-thread intermediates, reused from image to image (OpenCV reallocates only on a new size).
struct scratch {
  std::vector<cv::Mat> crops;
  std::vector<cv::Mat> planes;
  cv::Mat merged;
  cv::Mat resized;
  cv::Mat rotated;
  cv::Mat scaled_taps;
};

void augment_image(const std::uint8_t* image, const augment_shape& shape, const augment_sample& s,
                   float* out) {
  thread_local scratch t;
  const int side = shape.resize;
  const cv::Size size(side, side);
  const cv::Rect window(s.left, s.top, shape.crop, shape.crop);
  const cv::Matx23d to_source = output_to_source(s, side);
  const int warp_flags =
      (shape.interp == augment_interp::nearest ? cv::INTER_NEAREST : cv::INTER_LINEAR) |
      cv::WARP_INVERSE_MAP;
  const int taps = 2 * shape.radius + 1;
  const std::size_t in_plane = shape.input_pixels();
  const std::size_t out_plane = shape.output_pixels();
  // warpAffine takes up to 4 interleaved channels; more are done 4 at a time.
  for (int c0 = 0; c0 < shape.channels; c0 += 4) {
    const int group = std::min(4, shape.channels - c0);
    t.crops.clear();
    for (int k = 0; k < group; ++k) {
      // OpenCV has no read-only Mat: the input is only read.
      auto* plane = const_cast<std::uint8_t*>(image + static_cast<std::size_t>(c0 + k) * in_plane);
      t.crops.emplace_back(cv::Mat(shape.height, shape.width, CV_8UC1, plane)(window));
    }
    if (group == 1)
      cv::resize(t.crops[0], t.resized, size, 0, 0, cv::INTER_LINEAR);
    else {
      cv::merge(t.crops, t.merged);
      cv::resize(t.merged, t.resized, size, 0, 0, cv::INTER_LINEAR);
    }
    cv::warpAffine(t.resized, t.rotated, to_source, size, warp_flags, cv::BORDER_CONSTANT,
                   cv::Scalar::all(0));
    if (group == 1) {
      t.planes.assign(1, t.rotated);
    } else {
      cv::split(t.rotated, t.planes);
    }
    // The image's own Gaussian taps (the reference's, gaussian_weights()), rows and columns.
    const cv::Mat gauss(taps, 1, CV_32FC1, const_cast<float*>(s.weights));
    for (int k = 0; k < group; ++k) {
      const int c = c0 + k;
      // Normalize folded into the blur: its weights sum to 1, so blur((v - mean) / std) =
      // blur(v) / std - mean / std up to rounding; the column taps take the 1 / std.
      const float inv_std = shape.inv_std[c];
      const cv::Mat* columns = &gauss;
      if (inv_std != 1.0F) {
        gauss.convertTo(t.scaled_taps, CV_32F, inv_std);
        columns = &t.scaled_taps;
      }
      float* plane = out + static_cast<std::size_t>(c) * out_plane;
      cv::Mat dst(side, side, CV_32FC1, plane);
      // From the uint8 plane straight to float32: OpenCV's row pass reads uint8 and sums in
      // float, which saves a conversion pass (130 us for three planes instead of 36 + 231 us for
      // convertTo and a float GaussianBlur).
      cv::sepFilter2D(t.planes[static_cast<std::size_t>(k)], dst, CV_32F, gauss, *columns,
                      cv::Point(-1, -1), -static_cast<double>(shape.mean[c]) * inv_std,
                      cv::BORDER_REFLECT_101);
      if (dst.data != reinterpret_cast<uchar*>(plane))
        throw std::logic_error("cv::sepFilter2D reallocated its output");
    }
  }
}

/// Sets OpenCV's thread count for the batch and restores it after.
class opencv_threads {
public:
  explicit opencv_threads(int n) : previous_(cv::getNumThreads()) {
    if (previous_ != n) cv::setNumThreads(n);
  }
  opencv_threads(const opencv_threads&) = delete;
  opencv_threads& operator=(const opencv_threads&) = delete;
  ~opencv_threads() {
    if (cv::getNumThreads() != previous_) cv::setNumThreads(previous_);
  }

private:
  int previous_;
};

} // namespace

void augment_batch(const std::uint8_t* input, const augment_shape& shape,
                   std::span<const augment_sample> samples, float* out, thread_pool& pool) {
  if (!built_in()) throw std::invalid_argument("augment_opencv: " + absence_reason());
  const std::size_t in_image = static_cast<std::size_t>(shape.channels) * shape.input_pixels();
  const std::size_t out_image = static_cast<std::size_t>(shape.channels) * shape.output_pixels();
  const auto batch = static_cast<std::size_t>(shape.batch);
  if (threading_in_use() == threading::opencv_pool) {
    const opencv_threads threads(pool.size());
    for (std::size_t i = 0; i < batch; ++i)
      augment_image(input + i * in_image, shape, samples[i], out + i * out_image);
    return;
  }
  // gpubench's threads take whole images; OpenCV's own pool would only add a second layer of
  // threads competing for the same cores.
  // Images are handed out one at a time, not in fixed ranges: on a shared or virtual machine one
  // core can fall behind, and a fixed half of the batch would then wait on it.
  const opencv_threads threads(1);
  std::atomic<std::size_t> next{0};
  pool.parallel_for(pool.size(), [&](std::size_t /*begin*/, std::size_t /*end*/) {
    for (std::size_t i = next++; i < batch; i = next++)
      augment_image(input + i * in_image, shape, samples[i], out + i * out_image);
  });
}

#else // no OpenCV

std::string version() { return {}; }
std::string description() { return "not built in"; }
std::string row_description(int /*threads*/) { return absence_reason(); }

void augment_batch(const std::uint8_t* /*input*/, const augment_shape& /*shape*/,
                   std::span<const augment_sample> /*samples*/, float* /*out*/,
                   thread_pool& /*pool*/) {
  throw std::invalid_argument("augment_opencv: " + absence_reason());
}

#endif

} // namespace gpubench::augment_opencv
