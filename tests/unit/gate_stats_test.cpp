// Specification of the gate's statistics (gate_stats.hpp, docs/compare.md): the exact law of U,
// the interval ranks, the Hodges-Lehmann interval's coverage and the verdicts' error rates and
// power on known distributions.
#include "gpubench/gate/compare.hpp"
#include "gpubench/gate/gate_stats.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <cmath>
#include <random>

using gpubench::verdict;

namespace {

using gpubench::test::fresh_seed;

/// `runs` per-run medians around `center` with log-normal between-run noise `sd`.
std::vector<std::vector<double>> runs_around(std::mt19937_64& rng, int runs, double center,
                                             double sd, int samples = 20) {
  std::normal_distribution<double> between(0.0, sd);
  std::normal_distribution<double> within(0.0, 0.005);
  std::vector<std::vector<double>> out;
  for (int r = 0; r < runs; ++r) {
    const double run_center = center * std::exp(between(rng));
    std::vector<double> s;
    for (int i = 0; i < samples; ++i) s.push_back(run_center * std::exp(within(rng)));
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace

TEST_CASE("the law of U is counted exactly for small samples", "[gate]") {
  // m = n = 3: 20 arrangements, one with U = 0.
  CHECK(gpubench::mann_whitney_cdf(3, 3, 0) == Approx(1.0 / 20));
  // m = n = 5: 252 arrangements; U <= 4 in 12 of them.
  CHECK(gpubench::mann_whitney_cdf(5, 5, 4) == Approx(12.0 / 252));
  CHECK(gpubench::mann_whitney_cdf(5, 5, 25) == 1.0);
  CHECK(gpubench::mann_whitney_cdf(4, 7, -1) == 0.0);
  // Symmetric about m n / 2.
  CHECK(gpubench::mann_whitney_cdf(6, 4, 11) == Approx(1 - gpubench::mann_whitney_cdf(6, 4, 12)));
  // The normal approximation beyond 60 a side continues the exact law.
  CHECK(gpubench::mann_whitney_cdf(60, 60, 1500) ==
        Approx(gpubench::mann_whitney_cdf(61, 60, 1500 + 30)).margin(0.02));
}

TEST_CASE("interval ranks: how many differences are cut from each end", "[gate]") {
  const auto r33 = gpubench::shift_interval_rank(3, 3, 0.90);
  CHECK(r33.cut == 1); // [min, max] of the 9 differences covers 90%
  CHECK(r33.coverage == Approx(0.90));
  CHECK(gpubench::shift_interval_rank(2, 2, 0.90).cut == 0); // no 90% interval with 2 a side
  const auto r55 = gpubench::shift_interval_rank(5, 5, 0.90);
  CHECK(r55.cut == 5);
  CHECK(r55.coverage == Approx(1 - 2 * 12.0 / 252));
  const auto big = gpubench::shift_interval_rank(100, 100, 0.95);
  CHECK(big.cut > 0);
  CHECK(big.coverage >= 0.95 - 0.005);
}

TEST_CASE("Hodges-Lehmann estimates a pure shift exactly", "[gate]") {
  const std::vector<double> a{1, 2, 3, 4, 5, 6, 7};
  std::vector<double> b;
  for (const double x : a) b.push_back(x + 2.5);
  const auto e = gpubench::hodges_lehmann(a, b, 0.90);
  CHECK(e.estimate == Approx(2.5));
  CHECK(e.bounded);
  CHECK(e.lo <= 2.5);
  CHECK(e.hi >= 2.5);
  CHECK_FALSE(
      gpubench::hodges_lehmann(std::vector<double>{1, 2}, std::vector<double>{3, 4}, 0.9).bounded);
}

TEST_CASE("the interval covers the true shift at its stated level", "[gate]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  int missed = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(5);
    std::vector<double> b(5);
    for (auto& x : a) x = noise(rng);
    for (auto& x : b) x = 0.7 + noise(rng);
    const auto e = gpubench::hodges_lehmann(a, b, 0.90);
    if (!(e.lo <= 0.7 && 0.7 <= e.hi)) ++missed;
  }
  // Coverage 1 - 24/252 = 90.5%: expect ~190 misses of 2000; 4 standard deviations above.
  CHECK(missed < 190 + 4 * 13);
}

TEST_CASE("interval verdicts against threshold and margin", "[gate]") {
  const gpubench::gate_limits l{0.05, 0.025, 0};
  CHECK(gpubench::judge_interval(0.06, 0.12, true, l) == verdict::slower);
  CHECK(gpubench::judge_interval(0.05, 0.12, true, l) == verdict::inconclusive); // at, not beyond
  CHECK(gpubench::judge_interval(-0.12, -0.06, true, l) == verdict::faster);
  CHECK(gpubench::judge_interval(-0.02, 0.02, true, l) == verdict::same);
  CHECK(gpubench::judge_interval(-0.02, 0.03, true, l) == verdict::inconclusive);
  CHECK(gpubench::judge_interval(0.2, 0.3, false, l) == verdict::inconclusive);
  const gpubench::gate_limits one_run{0.05, 0.025, 0.10};
  CHECK(gpubench::judge_interval(0.08, 0.12, true, one_run) == verdict::inconclusive);
  CHECK(gpubench::judge_interval(0.16, 0.2, true, one_run) == verdict::slower);
  // One run a side can never show equivalence when the assumed noise reaches the margin ...
  CHECK(gpubench::judge_interval(0.0, 0.0, true, one_run) == verdict::inconclusive);
  // ... and a smaller allowance narrows the margin by itself: +-1.5% left of 2.5%.
  const gpubench::gate_limits small_noise{0.05, 0.025, 0.01};
  CHECK(gpubench::judge_interval(-0.01, 0.01, true, small_noise) == verdict::same);
  CHECK(gpubench::judge_interval(-0.01, 0.02, true, small_noise) == verdict::inconclusive);
}

TEST_CASE("identical builds: no false slower over many seeds (5 runs a side)", "[gate]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  gpubench::compare_options opts; // 5% threshold, 90% intervals
  int slower = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    // 2% between-run noise: twice what stable GPU measurements showed on the H200.
    const auto v = gpubench::judge_runs(runs_around(rng, 5, 1e-4, 0.02),
                                        runs_around(rng, 5, 1e-4, 0.02), opts, opts.threshold);
    if (v.outcome == verdict::slower) ++slower;
    CHECK(v.between_runs);
  }
  CHECK(slower <= 1); // the design rate is well below 0.1% at this noise
}

TEST_CASE("a 10% slowdown is caught in at least 95% of comparisons (5 runs a side)", "[gate]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const gpubench::compare_options opts;
  int caught = 0;
  int same_at_5 = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    // 1% between-run noise (the H200's stable GPU measurements: 1-2% max-min over 6 processes).
    const auto base = runs_around(rng, 5, 1e-4, 0.01);
    if (gpubench::judge_runs(base, runs_around(rng, 5, 1.10e-4, 0.01), opts, opts.threshold)
            .outcome == verdict::slower)
      ++caught;
    if (gpubench::judge_runs(base, runs_around(rng, 5, 1.05e-4, 0.01), opts, opts.threshold)
            .outcome == verdict::same)
      ++same_at_5;
  }
  CHECK(caught >= 990);  // simulated: 100%
  CHECK(same_at_5 == 0); // a 5% slowdown is never "same" (margin 2.5%)
}

TEST_CASE("one run a side: stricter, and says why", "[gate]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const gpubench::compare_options opts; // run noise 10%
  const auto base = runs_around(rng, 1, 1e-4, 0.0, 100);
  const auto twelve = runs_around(rng, 1, 1.12e-4, 0.0, 100);
  const auto v = gpubench::judge_runs(base, twelve, opts, opts.threshold);
  CHECK_FALSE(v.between_runs);
  CHECK(v.outcome == verdict::inconclusive); // 12% < 5% + 10%
  CHECK_THAT(v.note, Catch::Matchers::Contains("between-run noise unknown"));
  const auto thirty = runs_around(rng, 1, 1.3e-4, 0.0, 100);
  CHECK(gpubench::judge_runs(base, thirty, opts, opts.threshold).outcome == verdict::slower);
  // Identical runs, but one a side: equivalence cannot be shown (margin 2.5% - 10% run noise).
  const auto itself = gpubench::judge_runs(base, base, opts, opts.threshold);
  CHECK(itself.outcome == verdict::inconclusive);
  CHECK_THAT(itself.note, Catch::Matchers::Contains("cannot be shown"));
}

TEST_CASE("two runs a side give no interval at 90%: inconclusive, asking for more", "[gate]") {
  std::mt19937_64 rng(fresh_seed());
  const gpubench::compare_options opts;
  const auto v = gpubench::judge_runs(runs_around(rng, 2, 1e-4, 0.01),
                                      runs_around(rng, 2, 2e-4, 0.01), opts, opts.threshold);
  CHECK(v.outcome == verdict::inconclusive);
  CHECK_THAT(v.note, Catch::Matchers::Contains("at least 3 runs"));
}
