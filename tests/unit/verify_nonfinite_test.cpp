// Verification never passes over NaN or infinity: not when only the output has them,
// and not when the reference has them too (matching NaNs are not a verified result).
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/pipeline/pipeline_cpu.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

std::uint64_t fresh() {
  static const std::uint64_t seed = std::random_device{}();
  return seed;
}

} // namespace

TEST_CASE("augment's check fails on a NaN in the reference and the output alike",
          "[verify][augment]") {
  gpubench::augment_config cfg;
  cfg.batch = 4;
  cfg.channels = 3;
  cfg.resize = 32;
  cfg.stddev = {1.0F, 1.0F, 1.0F};
  const auto shape = gpubench::make_augment_shape(cfg);
  const std::size_t n = 4 * 3 * 32 * 32;
  std::mt19937_64 rng(fresh());
  INFO("seed " << fresh());
  std::uniform_real_distribution<float> value(-2.0F, 2.0F);
  std::vector<float> ref(n);
  for (auto& r : ref) r = value(rng);
  gpubench::thread_pool pool(2);
  // One element in 12288 is within the share of mismatches a check may allow: it still fails.
  const auto at = static_cast<std::size_t>(rng() % n);
  for (const float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
    auto r = ref;
    auto got = ref;
    r[at] = bad;
    got[at] = bad;
    const auto v = gpubench::augment_cpu::check_output(shape, r.data(), got.data(), pool);
    CHECK_FALSE(v.passed);
    CHECK(v.details["non_finite"] == 1);
  }
  // All NaN (what a blur of sigma 0 gave): fails.
  const std::vector<float> nan(n, std::nanf(""));
  CHECK_FALSE(gpubench::augment_cpu::check_output(shape, nan.data(), nan.data(), pool).passed);
}

TEST_CASE("vecadd's check fails on matching NaNs", "[verify][vecadd]") {
  gpubench::thread_pool pool(2);
  std::mt19937_64 rng(fresh());
  INFO("seed " << fresh());
  std::vector<float> ref(1000);
  for (auto& r : ref) r = static_cast<float>(rng() % 1000) * 0.25F;
  auto got = ref;
  CHECK(gpubench::check_vecadd(gpubench::dtype::f32, ref.data(), got.data(), ref.size(), pool)
            .passed);
  const auto at = static_cast<std::size_t>(rng() % ref.size());
  ref[at] = std::nanf("");
  got[at] = std::nanf(""); // the same bits
  CHECK_FALSE(gpubench::check_vecadd(gpubench::dtype::f32, ref.data(), got.data(), ref.size(), pool)
                  .passed);
}

TEST_CASE("pipeline's bitwise check fails on matching NaNs", "[verify][pipeline]") {
  std::vector<float> ref{1.0F, 2.0F, std::nanf("")};
  const auto got = ref;
  CHECK_FALSE(gpubench::pipeline_cpu::compare_bitwise(ref, got).passed);
  ref[2] = 3.0F;
  CHECK(gpubench::pipeline_cpu::compare_bitwise(ref, ref).passed);
  const std::vector<double> ref64{1.0, std::nan("")};
  const std::vector<float> got32{1.0F, std::nanf("")};
  CHECK_FALSE(gpubench::pipeline_cpu::compare_close(ref64, got32, 1e-6, 1e-6).passed);
}
