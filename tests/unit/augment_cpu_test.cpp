// Specification of the augment CPU reference (lib/src/augment/augment_cpu.cpp), op by op on small
// hand-checked planes, then the whole pipeline.
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/core/half.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>
#include <vector>

namespace ac = gpubench::augment_cpu;
namespace am = gpubench::augment_math;
using gpubench::augment_interp;

namespace {

using gpubench::test::fresh_seed;

std::vector<float> plane(int h, int w, float (*f)(int, int)) {
  std::vector<float> p(static_cast<std::size_t>(h * w));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) p[static_cast<std::size_t>(y * w + x)] = f(x, y);
  return p;
}

float at(const std::vector<float>& p, int w, int x, int y) {
  return p[static_cast<std::size_t>(y * w + x)];
}

} // namespace

TEST_CASE("to_float keeps 0..255 without scaling", "[augment][cpu]") {
  const std::vector<std::uint8_t> in{0, 1, 128, 255};
  std::vector<float> out(4);
  ac::to_float(in.data(), in.size(), out.data());
  CHECK(out == std::vector<float>{0.0F, 1.0F, 128.0F, 255.0F});
}

TEST_CASE("crop is an exact integer window", "[augment][cpu]") {
  const auto src = plane(4, 5, [](int x, int y) { return static_cast<float>(10 * y + x); });
  std::vector<float> out(6);
  ac::crop(src.data(), 4, 5, 1, 2, 2, 3, out.data());
  CHECK(out == std::vector<float>{12, 13, 14, 22, 23, 24});
  ac::crop(src.data(), 4, 5, 0, 0, 2, 3, out.data());
  CHECK(out == std::vector<float>{0, 1, 2, 10, 11, 12});
}

TEST_CASE("2x bilinear upsample of a ramp uses half-pixel centres and clamps at the edges",
          "[augment][cpu]") {
  // u = x / 2 - 0.25: output 0 reads pixel 0 only, output 7 reads pixel 3 only.
  const std::vector<float> expected{0.0F, 0.25F, 0.75F, 1.25F, 1.75F, 2.25F, 2.75F, 3.0F};
  SECTION("along x") {
    const auto src = plane(4, 4, [](int x, int) { return static_cast<float>(x); });
    std::vector<float> out(64);
    ac::resize_bilinear(src.data(), 4, 4, out.data(), 8, 8);
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) CHECK(at(out, 8, x, y) == expected[static_cast<std::size_t>(x)]);
  }
  SECTION("along y, non-square") {
    const auto src = plane(4, 3, [](int, int y) { return static_cast<float>(y); });
    std::vector<float> out(8 * 6);
    ac::resize_bilinear(src.data(), 4, 3, out.data(), 8, 6);
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 6; ++x) CHECK(at(out, 6, x, y) == expected[static_cast<std::size_t>(y)]);
  }
  SECTION("same size is the identity") {
    const auto src = plane(3, 5, [](int x, int y) { return static_cast<float>(7 * y + x * x); });
    std::vector<float> out(15);
    ac::resize_bilinear(src.data(), 3, 5, out.data(), 3, 5);
    CHECK(out == src);
  }
}

TEST_CASE("the resize source index follows PyTorch's align_corners=false rule", "[augment][cpu]") {
  // 128 -> 256: output 0 and 255 read one pixel each, weights 0.75/0.25 in between.
  const float scale = 128.0F / 256.0F;
  const auto first = am::resize_source(0, scale, 128);
  CHECK(first.i0 == 0);
  CHECK(first.l1 == 0.0F);
  const auto last = am::resize_source(255, scale, 128);
  CHECK(last.i0 == 127);
  CHECK(last.i1 == 127);
  const auto mid = am::resize_source(100, scale, 128);
  CHECK(mid.i0 == 49);
  CHECK(mid.i1 == 50);
  CHECK(mid.l1 == 0.75F);
}

TEST_CASE("rotation by 0 is the identity, nearest and bilinear", "[augment][cpu]") {
  const auto src = plane(5, 7, [](int x, int y) { return static_cast<float>(3 * y - x + 10); });
  std::vector<float> out(src.size());
  for (const auto interp : {augment_interp::nearest, augment_interp::bilinear}) {
    ac::rotate(src.data(), 5, 7, 1.0F, 0.0F, interp, out.data());
    CHECK(out == src);
  }
}

TEST_CASE("rotation by 90 degrees turns the picture counter-clockwise", "[augment][cpu]") {
  const std::vector<float> src{1, 2, 3, 4, 5, 6, 7, 8, 9};
  // The top row [1 2 3] becomes the left column, read upwards.
  const std::vector<float> expected{3, 6, 9, 2, 5, 8, 1, 4, 7};
  std::vector<float> out(9);
  // cos(pi/2) rounded to float is 6e-17, not 0: it must not move any sample.
  const auto c90 = static_cast<float>(std::cos(std::numbers::pi / 2));
  for (const float c : {0.0F, c90})
    for (const auto interp : {augment_interp::nearest, augment_interp::bilinear}) {
      ac::rotate(src.data(), 3, 3, c, 1.0F, interp, out.data());
      CHECK(out == expected);
    }
}

TEST_CASE("rotation fills 0 outside the source", "[augment][cpu]") {
  // 2 x 4, centre (1.5, 0.5): by 90 degrees, output (x, y) reads (2 - y, x - 1).
  const std::vector<float> src{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(8);
  ac::rotate(src.data(), 2, 4, 0.0F, 1.0F, augment_interp::nearest, out.data());
  const std::vector<float> expected{0, 3, 7, 0, 0, 2, 6, 0};
  CHECK(out == expected);

  // A constant picture turned by 45 degrees keeps its middle and loses its corners.
  std::vector<float> ones(9 * 9, 1.0F);
  std::vector<float> turned(ones.size());
  const auto c45 = static_cast<float>(std::cos(std::numbers::pi / 4));
  for (const auto interp : {augment_interp::nearest, augment_interp::bilinear}) {
    ac::rotate(ones.data(), 9, 9, c45, c45, interp, turned.data());
    CHECK(at(turned, 9, 4, 4) == 1.0F);
    CHECK(at(turned, 9, 0, 0) == 0.0F);
    CHECK(at(turned, 9, 8, 8) == 0.0F);
    CHECK(at(turned, 9, 4, 0) == 1.0F);
  }
}

TEST_CASE("bilinear rotation reproduces a linear function inside the picture", "[augment][cpu]") {
  const int n = 16;
  const auto f = [](double x, double y) { return 2.0 * x - 3.0 * y + 100.0; };
  std::vector<float> src(static_cast<std::size_t>(n * n));
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      src[static_cast<std::size_t>(y * n + x)] = static_cast<float>(f(x, y));
  const double angle = 0.3;
  const auto c = static_cast<float>(std::cos(angle));
  const auto s = static_cast<float>(std::sin(angle));
  std::vector<float> out(src.size());
  ac::rotate(src.data(), n, n, c, s, augment_interp::bilinear, out.data());
  const double centre = (n - 1) / 2.0;
  for (int y = 4; y < n - 4; ++y)
    for (int x = 4; x < n - 4; ++x) {
      const double xs = c * (x - centre) - s * (y - centre) + centre;
      const double ys = s * (x - centre) + c * (y - centre) + centre;
      CHECK(at(out, n, x, y) == Approx(f(xs, ys)).margin(1e-3));
    }
}

TEST_CASE("reflect-101 mirrors without repeating the edge", "[augment][cpu]") {
  CHECK(am::reflect101(0, 5) == 0);
  CHECK(am::reflect101(4, 5) == 4);
  CHECK(am::reflect101(-1, 5) == 1);
  CHECK(am::reflect101(-3, 5) == 3);
  CHECK(am::reflect101(5, 5) == 3);
  CHECK(am::reflect101(6, 5) == 2);
  CHECK(am::reflect101(7, 5) == 1);
  CHECK(am::reflect101(0, 1) == 0);
}

TEST_CASE("gaussian weights are normalized, symmetric and follow exp(-x^2 / 2 sigma^2)",
          "[augment][cpu]") {
  for (const double sigma : {0.1, 0.7, 1.0, 2.0}) {
    const auto w = gpubench::gaussian_weights(sigma, 3);
    REQUIRE(w.size() == 7);
    CHECK(std::accumulate(w.begin(), w.end(), 0.0) == Approx(1.0).margin(1e-6));
    for (int k = 0; k < 3; ++k)
      CHECK(w[static_cast<std::size_t>(k)] == w[static_cast<std::size_t>(6 - k)]);
    CHECK(w[2] / w[3] == Approx(std::exp(-1.0 / (2 * sigma * sigma))).epsilon(1e-5));
  }
}

TEST_CASE("blur of an impulse gives the normalized 2-D kernel", "[augment][cpu]") {
  const int n = 11;
  const int r = 3;
  const auto w = gpubench::gaussian_weights(1.3, r);
  std::vector<float> src(static_cast<std::size_t>(n * n), 0.0F);
  src[static_cast<std::size_t>(5 * n + 5)] = 1.0F;
  std::vector<float> out(src.size());
  std::vector<float> scratch(src.size());
  ac::blur(src.data(), n, n, w.data(), r, out.data(), scratch.data());
  double sum = 0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const int dy = y - 5;
      const int dx = x - 5;
      const float expected =
          (std::abs(dx) <= r && std::abs(dy) <= r)
              ? w[static_cast<std::size_t>(dy + r)] * w[static_cast<std::size_t>(dx + r)]
              : 0.0F;
      CHECK(at(out, n, x, y) == expected);
      sum += at(out, n, x, y);
    }
  CHECK(sum == Approx(1.0).margin(1e-5));
}

TEST_CASE("blur mirrors reflect-101 at both borders", "[augment][cpu]") {
  // One row (the column pass then only scales by the weights' sum, ~1).
  const int w = 9;
  const int r = 2;
  const auto k = gpubench::gaussian_weights(1.0, r);
  const float sum = std::accumulate(k.begin(), k.end(), 0.0F);
  std::vector<float> out(w);
  std::vector<float> scratch(w);
  const auto blur_impulse = [&](int pos) {
    std::vector<float> src(w, 0.0F);
    src[static_cast<std::size_t>(pos)] = 1.0F;
    ac::blur(src.data(), 1, w, k.data(), r, out.data(), scratch.data());
  };
  const auto near = [&](int x, float v) {
    CHECK(out[static_cast<std::size_t>(x)] == Approx(v * sum).epsilon(1e-6));
  };
  blur_impulse(0); // index -1 mirrors to 1, so the edge pixel is seen once
  near(0, k[2]);
  near(1, k[1]);
  near(2, k[0]);
  near(3, 0.0F);
  blur_impulse(1); // pixel 1 is seen at 1 and at its mirror -1
  near(0, k[1] + k[3]);
  near(1, k[0] + k[2]);
  blur_impulse(w - 1);
  near(w - 1, k[2]);
  near(w - 2, k[3]);
  near(w - 3, k[4]);
  blur_impulse(w - 2); // pixel w-2 is seen at w-2 and at its mirror w
  near(w - 1, k[1] + k[3]);
}

TEST_CASE("normalize subtracts the mean and multiplies by 1 / std", "[augment][cpu]") {
  std::vector<float> v{0.0F, 127.5F, 255.0F};
  ac::normalize(v.data(), v.size(), 127.5F, 1.0F / 127.5F);
  CHECK(v == std::vector<float>{-1.0F, 0.0F, 1.0F});
}

TEST_CASE("the pipeline with crop = size = resize, no rotation and blur 1 is the identity",
          "[augment][cpu]") {
  INFO("seed " << fresh_seed());
  gpubench::augment_config cfg;
  cfg.batch = 3;
  cfg.channels = 2;
  cfg.height = cfg.width = cfg.crop = cfg.resize = 12;
  cfg.degrees = 0;
  cfg.blur = 1;
  const auto shape = gpubench::make_augment_shape(cfg);
  const auto samples = gpubench::draw_augment_samples(cfg, fresh_seed(), 0, cfg.batch);
  std::vector<std::uint8_t> in(static_cast<std::size_t>(3 * 2 * 12 * 12));
  std::mt19937_64 rng(fresh_seed());
  for (auto& b : in) b = static_cast<std::uint8_t>(rng() & 255U);
  std::vector<float> out(in.size());
  gpubench::thread_pool pool(2);
  ac::augment_batch(in.data(), shape, samples, out.data(), pool);
  for (std::size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == static_cast<float>(in[i]));
}

TEST_CASE("the pipeline's output does not depend on the batch size or the thread count",
          "[augment][cpu]") {
  INFO("seed " << fresh_seed());
  gpubench::augment_config cfg;
  cfg.channels = 3;
  cfg.height = 40;
  cfg.width = 52;
  cfg.crop = 24;
  cfg.resize = 36;
  cfg.mean = {10.0F, 20.0F, 30.0F};
  cfg.stddev = {2.0F, 4.0F, 0.5F};
  gpubench::thread_pool one(1);
  gpubench::thread_pool three(3);
  const auto run = [&](int batch, gpubench::thread_pool& pool) {
    cfg.batch = batch;
    const auto shape = gpubench::make_augment_shape(cfg);
    std::vector<std::uint8_t> in(static_cast<std::size_t>(batch * 3 * 40 * 52));
    gpubench::fill_synthetic_images(in.data(), cfg, fresh_seed(), batch, pool);
    const auto samples = gpubench::draw_augment_samples(cfg, fresh_seed(), 4, batch);
    std::vector<float> out(static_cast<std::size_t>(batch * 3 * 36 * 36));
    ac::augment_batch(in.data(), shape, samples, out.data(), pool);
    return out;
  };
  const auto small = run(2, one);
  const auto large = run(5, three);
  REQUIRE(std::equal(small.begin(), small.end(), large.begin()));
}

TEST_CASE("check_output counts every element outside the tolerance and rejects NaN",
          "[augment][cpu]") {
  gpubench::augment_config cfg;
  cfg.batch = 2;
  cfg.channels = 2;
  cfg.resize = 8;
  cfg.stddev = {1.0F, 0.25F};
  auto shape = gpubench::make_augment_shape(cfg);
  const std::size_t n = 2 * 2 * 64;
  std::vector<float> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = static_cast<float>(i) * 0.5F;
  gpubench::thread_pool pool(2);

  auto got = ref;
  auto v = ac::check_output(shape, ref.data(), got.data(), pool);
  CHECK(v.passed);
  CHECK(v.mismatches == 0);
  CHECK(v.checked == n);

  got[3] += 0.5e-3F; // channel 0 (std 1): within 1e-3
  got[70] += 3e-3F;  // channel 1 (std 0.25 -> tolerance 4e-3): within
  got[200] += 5e-3F; // channel 1 of image 1: outside
  v = ac::check_output(shape, ref.data(), got.data(), pool);
  CHECK(v.mismatches == 1);
  CHECK(v.max_abs_error == Approx(5e-3).epsilon(0.05));
  CHECK(v.details["first_mismatch"]["image"] == 1);
  CHECK(v.details["first_mismatch"]["channel"] == 1);
  CHECK_FALSE(v.passed); // 1 of 256 is more than 0.01 %

  got = ref;
  got[10] = std::nanf("");
  v = ac::check_output(shape, ref.data(), got.data(), pool);
  CHECK_FALSE(v.passed);
  CHECK(v.details["non_finite"] == 1);

  SECTION("f16 output is compared with a relative rounding allowance") {
    shape.out = gpubench::dtype::f16;
    std::vector<std::uint16_t> half(n);
    for (std::size_t i = 0; i < n; ++i) half[i] = gpubench::float_to_half(ref[i] * 1.0001F);
    v = ac::check_output(shape, ref.data(), half.data(), pool);
    CHECK(v.passed);
  }
}

TEST_CASE("the fused kernel's crop window holds every pixel its tile samples", "[augment][cpu]") {
  // The kernel checks each sample against the window anyway; this keeps the fast path taken.
  INFO("seed " << fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  const auto tile_w = gpubench::augment_tile_w;
  const auto tile_h = gpubench::augment_tile_h;
  for (int trial = 0; trial < 300; ++trial) {
    const int size = std::array{40, 77, 256, 300}[rng() % 4];
    const int crop = std::max(
        1, static_cast<int>(static_cast<double>(size) * std::array{0.3, 0.5, 1.0, 1.7}[rng() % 4]));
    const int radius = std::min(size - 1, std::array{0, 1, 3, 15}[rng() % 4]);
    const double angle = std::uniform_real_distribution<double>(-3.2, 3.2)(rng);
    const auto c = static_cast<float>(std::cos(angle));
    const auto s = static_cast<float>(std::sin(angle));
    const float scale = static_cast<float>(crop) / static_cast<float>(size);
    const int x0 =
        static_cast<int>(rng() % static_cast<unsigned>((size + tile_w - 1) / tile_w)) * tile_w;
    const int y0 =
        static_cast<int>(rng() % static_cast<unsigned>((size + tile_h - 1) / tile_h)) * tile_h;
    INFO("size " << size << " crop " << crop << " radius " << radius << " angle " << angle
                 << " tile " << x0 << "," << y0);
    const auto w = am::tile_source_window(
        std::max(0, x0 - radius), std::min(size - 1, x0 + tile_w - 1 + radius),
        std::max(0, y0 - radius), std::min(size - 1, y0 + tile_h - 1 + radius), size, crop, scale,
        c, s);
    const float centre = am::centre(size);
    const auto covered = [&](int xr, int yr) {
      if (xr < 0 || yr < 0 || xr >= size || yr >= size) return true; // not read: fill 0
      const auto tx = am::resize_source(xr, scale, crop);
      const auto ty = am::resize_source(yr, scale, crop);
      return !w.empty() && tx.i0 >= w.x0 && tx.i1 <= w.x1 && ty.i0 >= w.y0 && ty.i1 <= w.y1;
    };
    bool all = true;
    for (int hy = 0; hy < tile_h + 2 * radius; ++hy)
      for (int hx = 0; hx < tile_w + 2 * radius; ++hx) {
        const int gx = am::halo_coordinate(x0, hx, radius, size);
        const int gy = am::halo_coordinate(y0, hy, radius, size);
        const auto p = am::rotation_source(gx, gy, centre, centre, c, s);
        all = all && covered(am::round_to_int(p.x), am::round_to_int(p.y));
        const int fx = am::floor_to_int(p.x);
        const int fy = am::floor_to_int(p.y);
        all = all && covered(fx, fy) && covered(fx + 1, fy) && covered(fx, fy + 1) &&
              covered(fx + 1, fy + 1);
      }
    REQUIRE(all);
  }
}

TEST_CASE("with the default shape every tile's crop window fits the shared-memory stage",
          "[augment][cpu]") {
  const int size = 256;
  const int crop = 128;
  const int radius = 3;
  const int capacity = (gpubench::augment_tile_h + 2 * radius) * gpubench::augment_tile_w;
  int largest = 0;
  for (int deg = -180; deg <= 180; ++deg) {
    const double a = deg * std::numbers::pi / 180;
    for (int y0 = 0; y0 < size; y0 += gpubench::augment_tile_h)
      for (int x0 = 0; x0 < size; x0 += gpubench::augment_tile_w) {
        const auto w = am::tile_source_window(
            std::max(0, x0 - radius),
            std::min(size - 1, x0 + gpubench::augment_tile_w - 1 + radius),
            std::max(0, y0 - radius),
            std::min(size - 1, y0 + gpubench::augment_tile_h - 1 + radius), size, crop, 0.5F,
            static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a)));
        if (!w.empty()) largest = std::max(largest, w.width() * w.height());
      }
  }
  INFO("largest window " << largest << " of " << capacity);
  CHECK(largest <= capacity);
}
