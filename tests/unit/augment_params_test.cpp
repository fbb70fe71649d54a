// Specification of the augment parameter generator (lib/src/augment/augment_params.cpp): a pure
// function of (seed, step, sample), in range, and the same for any batch size.
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/cuda/augment.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <set>

namespace {

using gpubench::test::fresh_seed;

bool same(const gpubench::augment_sample& a, const gpubench::augment_sample& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

TEST_CASE("sample parameters do not depend on the batch size", "[augment][params]") {
  INFO("seed " << fresh_seed());
  const gpubench::augment_config cfg;
  const auto small = gpubench::draw_augment_samples(cfg, fresh_seed(), 3, 5);
  const auto large = gpubench::draw_augment_samples(cfg, fresh_seed(), 3, 17);
  for (std::size_t i = 0; i < small.size(); ++i) CHECK(same(small[i], large[i]));
  CHECK(same(small[4], gpubench::draw_augment_sample(cfg, fresh_seed(), 3, 4)));
}

TEST_CASE("steps, samples and seeds get different parameters", "[augment][params]") {
  INFO("seed " << fresh_seed());
  const gpubench::augment_config cfg;
  const auto a = gpubench::draw_augment_sample(cfg, fresh_seed(), 0, 0);
  CHECK_FALSE(same(a, gpubench::draw_augment_sample(cfg, fresh_seed(), 1, 0)));
  CHECK_FALSE(same(a, gpubench::draw_augment_sample(cfg, fresh_seed(), 0, 1)));
  CHECK_FALSE(same(a, gpubench::draw_augment_sample(cfg, fresh_seed() + 1, 0, 0)));
}

TEST_CASE("sample parameters stay in their ranges and cover them", "[augment][params]") {
  INFO("seed " << fresh_seed());
  gpubench::augment_config cfg;
  cfg.height = 130;
  cfg.width = 131;
  cfg.crop = 128;
  cfg.degrees = 30;
  cfg.sigma_lo = 0.5;
  cfg.sigma_hi = 1.5;
  std::set<int> tops;
  std::set<int> lefts;
  double lo_angle = 0;
  double hi_angle = 0;
  for (int i = 0; i < 2000; ++i) {
    const auto s =
        gpubench::draw_augment_sample(cfg, fresh_seed(), 7, static_cast<std::uint64_t>(i));
    tops.insert(s.top);
    lefts.insert(s.left);
    REQUIRE(s.angle_deg >= -30.0F);
    REQUIRE(s.angle_deg <= 30.0F);
    lo_angle = std::min(lo_angle, static_cast<double>(s.angle_deg));
    hi_angle = std::max(hi_angle, static_cast<double>(s.angle_deg));
    REQUIRE(s.sigma >= 0.5F);
    REQUIRE(s.sigma <= 1.5F);
    const double rad = static_cast<double>(s.angle_deg) * 3.14159265358979323846 / 180.0;
    REQUIRE(s.cos_a == static_cast<float>(std::cos(rad)));
    REQUIRE(s.sin_a == static_cast<float>(std::sin(rad)));
    float sum = 0;
    for (int k = 0; k < 7; ++k) sum += s.weights[k];
    REQUIRE(sum == Approx(1.0F).margin(1e-6));
    REQUIRE(s.weights[7] == 0.0F);
  }
  CHECK(tops == std::set<int>{0, 1, 2});
  CHECK(lefts == std::set<int>{0, 1, 2, 3});
  CHECK(lo_angle < -29.0);
  CHECK(hi_angle > 29.0);
}

TEST_CASE("no rotation range gives angle 0", "[augment][params]") {
  gpubench::augment_config cfg;
  cfg.degrees = 0;
  const auto s = gpubench::draw_augment_sample(cfg, 1, 0, 0);
  CHECK(s.angle_deg == 0.0F);
  CHECK(s.cos_a == 1.0F);
  CHECK(s.sin_a == 0.0F);
}

TEST_CASE("the shape carries 1 / std and the resize scale", "[augment][params]") {
  gpubench::augment_config cfg;
  cfg.channels = 3;
  cfg.mean = {1.0F, 2.0F, 3.0F};
  cfg.stddev = {0.5F};
  cfg.crop = 100;
  cfg.resize = 300;
  const auto s = gpubench::make_augment_shape(cfg);
  CHECK(s.mean[2] == 3.0F);
  CHECK(s.inv_std[1] == 2.0F);
  CHECK(s.scale == 100.0F / 300.0F);
  CHECK(s.radius == 3);
}

TEST_CASE("augment declares the FLOPs of its pixel arithmetic, op by op", "[augment][params]") {
  gpubench::augment_config cfg;
  cfg.batch = 4;
  cfg.channels = 3;
  cfg.resize = 100;
  cfg.blur = 7;
  const double values = 4.0 * 3 * 100 * 100;
  const auto nearest = gpubench::cuda::augment_flops(gpubench::make_augment_shape(cfg));
  CHECK(nearest.resize == 0); // nearest sampling reads, it does not compute
  CHECK(nearest.rotate == 0);
  CHECK(nearest.blur == values * 2 * 7 * 2); // a multiply-add per tap, rows and columns
  CHECK(nearest.normalize == values * 2);
  CHECK(nearest.total() == values * 30);
  cfg.interp = gpubench::augment_interp::bilinear;
  cfg.blur = 3;
  const auto bilinear = gpubench::cuda::augment_flops(gpubench::make_augment_shape(cfg));
  CHECK(bilinear.resize == values * 9); // three lerps: a subtraction and a multiply-add each
  CHECK(bilinear.rotate == values * 9);
  CHECK(bilinear.blur == values * 12);
  CHECK(bilinear.total() == values * (9 + 9 + 12 + 2));
}

TEST_CASE("synthetic images are the same for any batch size", "[augment][params]") {
  INFO("seed " << fresh_seed());
  gpubench::augment_config cfg;
  cfg.channels = 2;
  cfg.height = 20;
  cfg.width = 30;
  gpubench::thread_pool pool(2);
  std::vector<std::uint8_t> two(2 * 2 * 20 * 30);
  std::vector<std::uint8_t> three(3 * 2 * 20 * 30);
  gpubench::fill_synthetic_images(two.data(), cfg, fresh_seed(), 2, pool);
  gpubench::fill_synthetic_images(three.data(), cfg, fresh_seed(), 3, pool);
  CHECK(std::equal(two.begin(), two.end(), three.begin()));
  CHECK(std::set<std::uint8_t>(two.begin(), two.end()).size() > 50);
}
