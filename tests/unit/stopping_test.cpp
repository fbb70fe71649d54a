// The stopping rules behind one interface (lib/src/engine/stopping.cpp): the default `stable`
// rule decides exactly as the sampling loop always did, and nvbench's entropy rule stops once
// the entropy of the samples has stopped growing.
#include "gpubench/engine/measure.hpp"
#include "gpubench/engine/stopping.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <random>
#include <vector>

using namespace gpubench;

namespace {
using gpubench::test::fresh_seed;
measure_options quick(stopping_rule rule) {
  auto o = test::loop_options(10, 1000);
  o.stopping = rule;
  return o;
}
} // namespace

TEST_CASE("stopping rules: names round-trip and the default is stable", "[stopping]") {
  for (const auto r : {stopping_rule::stable, stopping_rule::entropy})
    CHECK(parse_stopping_rule(to_string(r)) == r);
  CHECK_FALSE(parse_stopping_rule("foo").has_value());
  CHECK(measure_options{}.stopping == stopping_rule::stable);
  CHECK(make_stopping_criterion(measure_options{})->rule() == stopping_rule::stable);
  CHECK(make_stopping_criterion(quick(stopping_rule::entropy))->rule() == stopping_rule::entropy);
}

TEST_CASE("stopping rules: the stable rule through the interface decides as the loop does",
          "[stopping]") {
  INFO("seed " << fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> cold(28e-6, 0.02 * 28e-6);
  std::vector<double> draws(1000);
  for (auto& d : draws) d = cold(rng);
  const auto o = quick(stopping_rule::stable);
  std::size_t i = 0;
  const auto looped = sample_until_stable(o, [&] { return draws[i++]; });
  // The same draws fed to the rule by hand, asked after each from --min-samples on.
  stable_criterion rule(o.max_noise, o.min_samples);
  rule.reset();
  std::optional<stop_reason> reason;
  std::size_t n = 0;
  while (n < draws.size() && !reason) {
    rule.add(draws[n++]);
    if (n >= static_cast<std::size_t>(o.min_samples)) reason = rule.done();
  }
  CHECK(looped.samples.size() == n);
  if (reason) CHECK(looped.stopped == *reason);
  CHECK(looped.stopping == nlohmann::json{{"rule", "stable"}});
  // reset() forgets: the same draws again decide the same.
  rule.reset();
  std::optional<stop_reason> again;
  for (std::size_t k = 0; k < n; ++k) {
    rule.add(draws[k]);
    if (k + 1 >= static_cast<std::size_t>(o.min_samples)) again = rule.done();
    if (again) break;
  }
  CHECK(again == reason);
}

TEST_CASE("entropy: the entropies of a small series, by hand", "[stopping]") {
  entropy_criterion rule(default_entropy_max_angle, default_entropy_min_r2);
  for (const double x : {1.0, 1.0, 2.0, 4.0}) rule.add(x);
  const auto& h = rule.history();
  REQUIRE(h.size() == 4);
  CHECK(h[0] == 0.0);                                // {1}
  CHECK(h[1] == 0.0);                                // {1, 1}
  CHECK(h[2] == Approx(std::log2(3.0) - 2.0 / 3.0)); // 2/3, 1/3: 0.918 bits
  CHECK(h[3] == Approx(1.5));                        // 1/2, 1/4, 1/4
  // Exact values, as nvbench counts them: 1.0001 is not 1.0, and 1.0 again counts with 1.0.
  entropy_criterion exact(default_entropy_max_angle, default_entropy_min_r2);
  exact.add(1.0);
  exact.add(1.0 + 1e-4);
  CHECK(exact.history().back() == Approx(1.0));
  exact.add(1.0);
  CHECK(exact.history().back() == Approx(std::log2(3.0) - 2.0 / 3.0));
}

TEST_CASE("entropy: the line fit's slope and R^2", "[stopping]") {
  const auto fit_of = [](std::initializer_list<double> ys) {
    sliding_line_fit f(100);
    for (const double y : ys) f.push(y);
    return f;
  };
  const auto line = fit_of({1.0, 3.0, 5.0, 7.0});
  CHECK(line.slope() == Approx(2.0));
  CHECK(line.r2() == Approx(1.0));
  const auto flat = fit_of({2.0, 2.0, 2.0});
  CHECK(flat.slope() == 0.0);
  CHECK(flat.r2() == 1.0); // nothing to explain: a perfect fit
  const auto zigzag = fit_of({0.0, 1.0, 0.0, 1.0});
  CHECK(zigzag.slope() == Approx(0.2));
  CHECK(zigzag.r2() == Approx(0.2)); // 0.2 of the variance explained
}

TEST_CASE("entropy: the sliding fit equals a fit of the window computed afresh", "[stopping]") {
  INFO("seed " << fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(0, 12);
  constexpr std::size_t window = 7;
  sliding_line_fit f(window);
  std::vector<double> all;
  for (int k = 0; k < 1000; ++k) {
    const double y = u(rng) + 0.01 * k;
    f.push(y);
    all.push_back(y);
    // The textbook fit of the last `window` values, from their means.
    const std::size_t n = std::min(window, all.size());
    if (n < 2) continue;
    const std::vector<double> ys(all.end() - static_cast<std::ptrdiff_t>(n), all.end());
    double my = 0;
    for (const double v : ys) my += v;
    my /= static_cast<double>(n);
    const double mx = (static_cast<double>(n) - 1) / 2;
    double sxy = 0;
    double sxx = 0;
    double syy = 0;
    for (std::size_t i = 0; i < n; ++i) {
      sxy += (static_cast<double>(i) - mx) * (ys[i] - my);
      sxx += (static_cast<double>(i) - mx) * (static_cast<double>(i) - mx);
      syy += (ys[i] - my) * (ys[i] - my);
    }
    REQUIRE(f.size() == n);
    REQUIRE(f.slope() == Approx(sxy / sxx).margin(1e-9));
    REQUIRE(f.r2() == Approx(sxy * sxy / (sxx * syy)).margin(1e-9));
  }
}

// nvbench's own tests of its rule (testing/entropy_criterion.cu), fed to this one: the same
// series, the same parameters, the same answers.
TEST_CASE("entropy: nvbench's test series stop as they do in nvbench", "[stopping]") {
  entropy_criterion constant(default_entropy_max_angle, default_entropy_min_r2);
  for (int i = 0; i < 6; ++i) constant.add(42.0);
  CHECK(constant.done() == stop_reason::entropy);

  // 0, 1, ..., 5, then 5 for ever: the entropy rises for six samples and falls after, an arch
  // whose line has an angle near -1.8 degrees and R^2 near 0.5.
  const auto arch = [](double max_angle, double min_r2) {
    entropy_criterion rule(max_angle, min_r2);
    for (double x = 0.0; x < 50.0; x += 1.0) rule.add(x > 5.0 ? 5.0 : x);
    return rule.done();
  };
  CHECK(arch(-1.0, 0.3) == stop_reason::entropy);
  CHECK_FALSE(arch(-1.0, 0.7));
  CHECK_FALSE(arch(-2.0, 0.3));
}

TEST_CASE("entropy: judged on even sample counts only, as nvbench does", "[stopping]") {
  entropy_criterion rule(default_entropy_max_angle, default_entropy_min_r2);
  for (int i = 0; i < 5; ++i) rule.add(1.0);
  CHECK_FALSE(rule.done());
  rule.add(1.0);
  CHECK(rule.done() == stop_reason::entropy);
}

TEST_CASE("entropy: a constant series stops at --min-samples", "[stopping]") {
  const auto out = sample_until_stable(quick(stopping_rule::entropy), [] { return 1e-3; });
  CHECK(out.converged);
  CHECK(out.stopped == stop_reason::entropy);
  CHECK(out.samples.size() == 10);
  CHECK(out.stopping.at("rule") == "entropy");
  CHECK(out.stopping.at("angle_deg") == 0.0);
  CHECK(out.stopping.at("r2") == 1.0);
  CHECK(out.stopping.at("max_angle_deg") == default_entropy_max_angle);
  CHECK(out.stopping.at("min_r2") == default_entropy_min_r2);
}

TEST_CASE("entropy: a distribution that keeps widening does not stop before --max-samples",
          "[stopping]") {
  double x = 1e-3;
  // Every sample 1% above the last: each a value of its own, so the entropy is log2(n), which
  // rises at more than 0.048 degrees per sample over the last 299 until n is near 1800.
  const auto out = sample_until_stable(quick(stopping_rule::entropy), [&] { return x *= 1.01; });
  CHECK_FALSE(out.converged);
  CHECK(out.stopped == stop_reason::max_samples);
  CHECK(out.samples.size() == 1000);
  CHECK(out.stopping.at("angle_deg").get<double>() > default_entropy_max_angle);
  CHECK(out.stopping.at("entropy_bits").get<double>() == Approx(std::log2(1000.0)));
}

TEST_CASE("entropy: samples from a fixed distribution converge", "[stopping]") {
  INFO("seed " << fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  // Event-timer-like samples: 28 us with a 2% spread, on a 0.5 us grid (about 5 distinct values).
  std::normal_distribution<double> cold(28e-6, 0.02 * 28e-6);
  auto o = quick(stopping_rule::entropy);
  o.max_samples = 100000;
  const auto out = sample_until_stable(o, [&] { return std::round(cold(rng) / 0.5e-6) * 0.5e-6; });
  CHECK(out.converged);
  CHECK(out.stopped == stop_reason::entropy);
  CHECK(out.stopping.at("angle_deg").get<double>() <= default_entropy_max_angle);
  CHECK(out.stopping.at("r2").get<double>() >= default_entropy_min_r2);
}

TEST_CASE("entropy: a stricter angle needs more samples", "[stopping]") {
  std::mt19937_64 rng(7);
  std::vector<double> draws(100000);
  std::uniform_int_distribution<int> grid(0, 20);
  for (auto& d : draws) d = 1e-5 * (100 + grid(rng));
  const auto run = [&](double angle) {
    auto o = quick(stopping_rule::entropy);
    o.max_samples = 100000;
    o.entropy_max_angle = angle;
    std::size_t i = 0;
    return sample_until_stable(o, [&] { return draws[i++]; }).samples.size();
  };
  CHECK(run(0.01) > run(0.048));
}
