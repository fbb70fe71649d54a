// Specification of augment's OpenCV baseline (lib/src/augment/augment_opencv.cpp): the same
// per-sample parameters as the float reference, its output within the documented tolerance of the
// reference's, the rounding bound exact where no rotation rounds, and the row's absence said when
// OpenCV is not built in.
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/engine/environment.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace ao = gpubench::augment_opencv;
using gpubench::augment_config;
using gpubench::augment_interp;
using gpubench::augment_shape;
using gpubench::thread_pool;

namespace {

using gpubench::test::fresh_seed;

/// One batch through both implementations.
struct both {
  augment_shape shape;
  std::vector<float> ref;
  std::vector<float> cv;
};

both run_both(const augment_config& cfg, std::uint64_t seed, thread_pool& pool) {
  both b;
  b.shape = gpubench::make_augment_shape(cfg);
  std::vector<std::uint8_t> input(static_cast<std::size_t>(cfg.batch) * cfg.channels *
                                  b.shape.input_pixels());
  gpubench::fill_synthetic_images(input.data(), cfg, seed, cfg.batch, pool);
  const auto samples = gpubench::draw_augment_samples(cfg, seed, 0, cfg.batch);
  const std::size_t n =
      static_cast<std::size_t>(cfg.batch) * cfg.channels * b.shape.output_pixels();
  b.ref.assign(n, 0.0F);
  b.cv.assign(n, std::numeric_limits<float>::quiet_NaN()); // every element must be written
  gpubench::augment_cpu::augment_batch(input.data(), b.shape, samples, b.ref.data(), pool);
  ao::augment_batch(input.data(), b.shape, samples, b.cv.data(), pool);
  return b;
}

augment_config small_config() {
  augment_config cfg;
  cfg.batch = 5;
  cfg.height = 70;
  cfg.width = 60;
  cfg.crop = 40;
  cfg.resize = 80;
  return cfg;
}

} // namespace

TEST_CASE("OpenCV baseline: within the documented tolerance of the float reference",
          "[augment][opencv]") {
  if (!ao::built_in()) {
    WARN("OpenCV is not built in: " << ao::absence_reason());
    return;
  }
  INFO("seed " << fresh_seed());
  thread_pool pool(2);
  struct variant {
    const char* what;
    int channels;
    augment_interp interp;
    std::vector<float> mean;
    std::vector<float> stddev;
  };
  const std::vector<variant> variants{
      {"3 channels, nearest", 3, augment_interp::nearest, {0.0F}, {1.0F}},
      {"1 channel", 1, augment_interp::nearest, {0.0F}, {1.0F}},
      {"6 channels (two groups of interleaved channels)",
       6,
       augment_interp::nearest,
       {0.0F},
       {1.0F}},
      {"bilinear rotation", 3, augment_interp::bilinear, {0.0F}, {1.0F}},
      {"per-channel mean and std", 3, augment_interp::nearest, {10, 120, 250}, {0.5F, 2, 64}},
  };
  for (const auto& v : variants) {
    INFO(v.what);
    augment_config cfg = small_config();
    cfg.batch = 16;
    cfg.channels = v.channels;
    cfg.interp = v.interp;
    cfg.mean = v.mean;
    cfg.stddev = v.stddev;
    const both b = run_both(cfg, fresh_seed(), pool);
    const auto check = ao::check_output(b.shape, b.ref.data(), b.cv.data(), pool);
    INFO(check.details.dump());
    CHECK(check.passed);
    CHECK(check.checked == b.ref.size());
    CHECK(check.details["non_finite"] == 0);
  }
}

TEST_CASE("OpenCV baseline: without a rotation to round, every element is within the rounding "
          "bound of its uint8 resize",
          "[augment][opencv]") {
  if (!ao::built_in()) {
    WARN("OpenCV is not built in");
    return;
  }
  INFO("seed " << fresh_seed());
  thread_pool pool(2);
  augment_config cfg = small_config();
  cfg.degrees = 0; // cos 1, sin 0: warpAffine copies, as the reference does
  SECTION("no resize: the only difference is the blur's float rounding") {
    cfg.resize = cfg.crop;
    const both b = run_both(cfg, fresh_seed(), pool);
    double worst = 0;
    for (std::size_t i = 0; i < b.ref.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(b.cv[i] - b.ref[i])));
    CHECK(worst < 1e-3);
  }
  SECTION("a 2x resize rounds each value to uint8, within 0.625 (OpenCV's fixed point)") {
    const both b = run_both(cfg, fresh_seed(), pool);
    double worst = 0;
    for (std::size_t i = 0; i < b.ref.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(b.cv[i] - b.ref[i])));
    CHECK(worst <= 0.625 + 1e-3);
    CHECK(worst > 0.0); // uint8 intermediates do round: the comparison is not vacuous
  }
}

TEST_CASE("OpenCV baseline: an image's output depends on its parameters, not on the batch or the "
          "threads",
          "[augment][opencv]") {
  if (!ao::built_in()) {
    WARN("OpenCV is not built in");
    return;
  }
  INFO("seed " << fresh_seed());
  thread_pool one(1);
  thread_pool two(2);
  augment_config cfg = small_config();
  const both five = run_both(cfg, fresh_seed(), two);
  cfg.batch = 3;
  const both three = run_both(cfg, fresh_seed(), one);
  REQUIRE(three.cv.size() * 5 == five.cv.size() * 3);
  CHECK(std::equal(three.cv.begin(), three.cv.end(), five.cv.begin()));
}

TEST_CASE("OpenCV baseline: OpenCV's own pool gives the same output as one image per thread",
          "[augment][opencv]") {
  if (!ao::built_in()) {
    WARN("OpenCV is not built in");
    return;
  }
  thread_pool pool(2);
  const both per_image = run_both(small_config(), fresh_seed(), pool);
  {
    const gpubench::environment_override opencv(
        [](gpubench::environment& e) { e.opencv_pool_threading = true; });
    CHECK(ao::threading_in_use() == ao::threading::opencv_pool);
    const both opencv_pool = run_both(small_config(), fresh_seed(), pool);
    CHECK(std::equal(per_image.cv.begin(), per_image.cv.end(), opencv_pool.cv.begin()));
  }
  CHECK(ao::threading_in_use() == ao::threading::per_image);
}

TEST_CASE("OpenCV baseline: the check fails a wrong output", "[augment][opencv]") {
  if (!ao::built_in()) {
    WARN("OpenCV is not built in");
    return;
  }
  thread_pool pool(2);
  const both b = run_both(small_config(), fresh_seed(), pool);
  SECTION("an image shifted by one pixel") {
    std::vector<float> shifted(b.cv.size());
    std::copy(b.cv.begin() + 1, b.cv.end(), shifted.begin());
    const auto check = ao::check_output(b.shape, b.ref.data(), shifted.data(), pool);
    CHECK_FALSE(check.passed);
  }
  SECTION("one element not written (NaN)") {
    std::vector<float> holed = b.cv;
    holed[holed.size() / 2] = std::numeric_limits<float>::quiet_NaN();
    const auto check = ao::check_output(b.shape, b.ref.data(), holed.data(), pool);
    CHECK_FALSE(check.passed);
    CHECK(check.details["non_finite"] == 1);
  }
  SECTION("values off by more than a uint8 level on 1% of the elements") {
    std::vector<float> off = b.cv;
    for (std::size_t i = 0; i < off.size(); i += 100) off[i] += 2.5F;
    const auto check = ao::check_output(b.shape, b.ref.data(), off.data(), pool);
    CHECK_FALSE(check.passed);
  }
}

TEST_CASE("OpenCV baseline: absent, it says why and refuses to run", "[augment][opencv]") {
  const gpubench::environment_override no_opencv(
      [](gpubench::environment& e) { e.pretend_no_opencv = true; });
  CHECK_FALSE(ao::built_in());
  CHECK(ao::version().empty());
  CHECK_THAT(ao::absence_reason(), Catch::Contains("not built in"));
  thread_pool pool(1);
  augment_config cfg = small_config();
  cfg.batch = 1;
  const augment_shape shape = gpubench::make_augment_shape(cfg);
  std::vector<std::uint8_t> input(static_cast<std::size_t>(cfg.channels) * shape.input_pixels());
  std::vector<float> out(static_cast<std::size_t>(cfg.channels) * shape.output_pixels());
  const auto samples = gpubench::draw_augment_samples(cfg, 1, 0, 1);
  CHECK_THROWS_WITH(ao::augment_batch(input.data(), shape, samples, out.data(), pool),
                    Catch::Contains("not built in"));
}
