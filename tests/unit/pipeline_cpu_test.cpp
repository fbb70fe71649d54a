// Specification of the pipeline's host side: the CPU model reference is the gradient of its loss,
// FLOPs are counted as documented, the bitwise weight check catches one flipped bit, pooling is an
// average, and the plan rejects bad input naming the option.
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"
#include "gpubench/pipeline/pipeline_cpu.hpp"
#include "gpubench/registry/registry.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <cmath>
#include <cstring>
#include <random>

using namespace gpubench;

namespace {

using gpubench::test::fresh_seed;

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

std::vector<nlohmann::json> plan(const param_values& given) {
  const benchmark* b = find_benchmark("pipeline");
  REQUIRE(b != nullptr);
  return b->plan(with_defaults(*b, given), common_options{});
}

} // namespace

TEST_CASE("the parameter layout is W0 b0 W1 b1 ... and FLOPs are counted per layer",
          "[pipeline][model]") {
  const cuda::mlp_shape s{{4, 3, 2}, false};
  CHECK(s.layers() == 2);
  CHECK(s.weight_offset(0) == 0);
  CHECK(s.bias_offset(0) == 12);
  CHECK(s.weight_offset(1) == 15);
  CHECK(s.bias_offset(1) == 21);
  CHECK(s.param_count() == 23);
  CHECK(s.forward_flops(5) == 2.0 * 5 * (12 + 6));
  // forward 18, weight gradients 18, input gradients of the second layer only 6 (per sample).
  CHECK(s.train_flops(5) == 2.0 * 5 * (18 + 18 + 6));
}

TEST_CASE("initial parameters are deterministic and within the He bound", "[pipeline][model]") {
  INFO("seed " << fresh_seed());
  const cuda::mlp_shape s{{16, 8, 3}, false};
  const auto a = pipeline_cpu::initial_params(s, fresh_seed(), 1);
  CHECK(a == pipeline_cpu::initial_params(s, fresh_seed(), 1));
  CHECK(a != pipeline_cpu::initial_params(s, fresh_seed(), 2));
  for (std::size_t i = s.weight_offset(0); i < s.bias_offset(0); ++i)
    CHECK(std::fabs(a[i]) <= std::sqrt(6.0 / 16));
  for (std::size_t i = s.bias_offset(1); i < s.param_count(); ++i) CHECK(std::fabs(a[i]) <= 0.01);
}

TEST_CASE("the CPU training step descends the gradient of its loss", "[pipeline][model]") {
  INFO("seed " << fresh_seed());
  const cuda::mlp_shape s{{5, 4, 6, 3}, false};
  const int batch = 3;
  const auto params = to_double(pipeline_cpu::initial_params(s, fresh_seed(), 3));
  const auto x = to_double(pipeline_cpu::uniform_values(5 * batch, -1, 1, fresh_seed(), 4));
  const auto t = to_double(pipeline_cpu::uniform_values(3 * batch, -1, 1, fresh_seed(), 5));
  const double lr = 1e-3;
  auto stepped = params;
  pipeline_cpu::train_step(s, stepped, x, t, lr, batch);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double grad = (params[i] - stepped[i]) / lr;
    auto plus = params;
    auto minus = params;
    const double h = 1e-6;
    plus[i] += h;
    minus[i] -= h;
    const double numeric =
        (pipeline_cpu::loss(s, plus, x, t, batch) - pipeline_cpu::loss(s, minus, x, t, batch)) /
        (2 * h);
    INFO("parameter " << i);
    CHECK(grad == Approx(numeric).margin(1e-6).epsilon(1e-4));
  }
  CHECK(pipeline_cpu::loss(s, stepped, x, t, batch) < pipeline_cpu::loss(s, params, x, t, batch));
}

TEST_CASE("relu_last applies the ReLU to the last layer too", "[pipeline][model]") {
  const cuda::mlp_shape s{{1, 1}, true};
  const std::vector<double> p{2.0, -1.0}; // y = max(2x - 1, 0)
  CHECK(pipeline_cpu::forward(s, p, std::vector<double>{0.25}, 1)[0] == 0.0);
  CHECK(pipeline_cpu::forward(s, p, std::vector<double>{1.0}, 1)[0] == 1.0);
}

TEST_CASE("average pooling averages each window and scales", "[pipeline][model]") {
  // one image, one channel, 4 x 4, pool 2: four windows
  std::vector<float> img(16);
  for (int i = 0; i < 16; ++i) img[i] = static_cast<float>(i);
  const auto out = pipeline_cpu::avg_pool(img, 1, 1, 4, 2, 0.25);
  REQUIRE(out.size() == 4);
  CHECK(out[0] == (0 + 1 + 4 + 5) * 0.25);
  CHECK(out[1] == (2 + 3 + 6 + 7) * 0.25);
  CHECK(out[2] == (8 + 9 + 12 + 13) * 0.25);
  CHECK(out[3] == (10 + 11 + 14 + 15) * 0.25);
}

TEST_CASE("the bitwise weight check passes equal weights and catches one flipped bit",
          "[pipeline][verify]") {
  const auto w = pipeline_cpu::uniform_values(1000, -1, 1, fresh_seed(), 6);
  CHECK(pipeline_cpu::compare_bitwise(w, w).passed);
  auto bad = w;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &bad[417], 4);
  bits ^= 1U;
  std::memcpy(&bad[417], &bits, 4);
  const auto v = pipeline_cpu::compare_bitwise(w, bad);
  CHECK_FALSE(v.passed);
  CHECK(v.mismatches == 1);
  CHECK(v.checked == 1000);
  CHECK(v.details.at("first_mismatch") == 417);
  CHECK(v.max_abs_error > 0);
  // +0 and -0 are equal numbers but not equal bits: the check is on bits.
  CHECK_FALSE(
      pipeline_cpu::compare_bitwise(std::vector<float>{0.0F}, std::vector<float>{-0.0F}).passed);
  CHECK_FALSE(pipeline_cpu::compare_bitwise(w, std::vector<float>(999)).passed);
}

TEST_CASE("the default plan runs both scenarios with every mode that applies", "[pipeline][plan]") {
  const auto points = plan({});
  REQUIRE(points.size() == 2);
  CHECK(points[0].at("scenario") == "augment-train");
  CHECK(points[0].at("mode") == "serial,streams,graph,cpu-augment");
  CHECK(points[1].at("scenario") == "encoder-decoder");
  CHECK(points[1].at("mode") == "serial,streams,graph");
  const auto cfg = pipeline_config_from_point(point_view(pipeline_param_table(), points[0]));
  CHECK(cfg.batch == 32);
  CHECK(cfg.depth == 2);
  CHECK(cfg.modes.size() == 4);
  CHECK(pipeline_config_from_point(point_view(pipeline_param_table(), points[1])).scenario ==
        pipeline_scenario::encoder_decoder);
}

TEST_CASE("sweeps expand scenario x batch x depth, and serial is always included",
          "[pipeline][plan]") {
  const auto points = plan(
      {{"scenario", "encoder-decoder"}, {"batch", "8,16,32"}, {"depth", "2,3"}, {"mode", "graph"}});
  REQUIRE(points.size() == 6);
  for (const auto& p : points) CHECK(p.at("mode") == "serial,graph");
}

TEST_CASE("bad pipeline input is a usage error naming the option", "[pipeline][plan]") {
  const auto rejects = [](param_values v, const char* option) {
    INFO(option);
    CHECK_THROWS_AS(plan(v), usage_error);
    try {
      plan(v);
    } catch (const usage_error& e) {
      CHECK(std::string(e.what()).find(option) != std::string::npos);
    }
  };
  rejects({{"depth", "0"}}, "--depth");
  rejects({{"batch", "0"}}, "--batch");
  rejects({{"steps", "1"}, {"warmup-steps", "2"}}, "--steps");
  rejects({{"scenario", "train"}}, "--scenario");
  rejects({{"mode", "overlap"}}, "--mode");
  rejects({{"scenario", "encoder-decoder"}, {"mode", "cpu-augment"}}, "--mode");
  rejects({{"pool", "7"}}, "--pool");
  rejects({{"lr", "-1"}}, "--lr");
  rejects({{"hidden", "0"}}, "--hidden");
}
