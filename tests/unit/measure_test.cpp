// The measurement engine: the stopping criterion of the sampling loop and host measurements.
#include "gpubench/engine/measure.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

using namespace gpubench;

namespace {
/// A sampler that counts its calls in `calls` and reports `seconds` per sample.
std::function<double()> counting(int& calls, double seconds) {
  return [&calls, seconds] {
    ++calls;
    return seconds;
  };
}
} // namespace

TEST_CASE("stopping: a steady sample converges at the minimum count and time", "[measure]") {
  measure_options o;
  o.warmup = 3;
  o.min_samples = 10;
  o.min_time = 0.5;
  o.max_noise = 0.01;
  int calls = 0;
  const auto out = sample_until_stable(o, counting(calls, 0.1));
  CHECK(out.converged);
  CHECK(out.samples.size() == 10); // 10 x 0.1 s >= 0.5 s of sampled time
  CHECK(calls == 13);              // warm-up samples are discarded
}

TEST_CASE("stopping: min-time keeps sampling past min-samples", "[measure]") {
  measure_options o;
  o.warmup = 0;
  o.min_samples = 2;
  o.min_time = 0.95; // ten samples of 0.1 s
  const auto out = sample_until_stable(o, [] { return 0.1; });
  CHECK(out.converged);
  CHECK(out.samples.size() == 10);
}

TEST_CASE("stopping: noise above the limit runs to max-samples, unconverged", "[measure]") {
  measure_options o;
  o.warmup = 0;
  o.min_samples = 5;
  o.max_samples = 50;
  o.min_time = 0;
  o.max_noise = 0.01;
  int i = 0;
  const auto out = sample_until_stable(o, [&] { return (i++ % 2 == 0) ? 1.0 : 2.0; });
  CHECK_FALSE(out.converged);
  CHECK(out.samples.size() == 50);
}

TEST_CASE("stopping: the timeout ends sampling", "[measure]") {
  measure_options o;
  o.warmup = 0;
  // Neither stopping rule may apply before the timeout: a fast host takes a million of these
  // instant samples within it, and the trimmed-interval rule would then call them stable.
  o.min_samples = 9999999;
  o.max_samples = 10000000;
  o.timeout = 0.05;
  int i = 0;
  const auto out = sample_until_stable(o, [&] { return (i++ % 2 == 0) ? 1.0 : 2.0; });
  CHECK_FALSE(out.converged);
  CHECK(out.samples.size() < 10000000);
}

TEST_CASE("stopping: warm-up counts against the timeout, then one sample is taken", "[measure]") {
  measure_options o;
  o.warmup = 1000; // a second of warm-up at 1 ms a sample, twenty times the timeout
  o.min_samples = 10;
  o.min_time = 0;
  o.timeout = 0.05;
  int calls = 0;
  const auto started = std::chrono::steady_clock::now();
  const auto out = sample_until_stable(o, [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 1e-3;
  });
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Sleeps only ever last longer than asked, so at most 50 warm-up samples fit in 0.05 s.
  CHECK(calls <= 51);
  CHECK(wall < 0.5);
  REQUIRE(out.samples.size() == 1); // the budget is spent: one sample, so there is data
  CHECK_FALSE(out.converged);
}

TEST_CASE("stopping: warm-up within the timeout runs in full", "[measure]") {
  measure_options o;
  o.warmup = 5;
  o.min_samples = 3;
  o.max_samples = 3;
  o.min_time = 0;
  o.timeout = 60;
  int calls = 0;
  const auto out = sample_until_stable(o, counting(calls, 1e-3));
  CHECK(calls == 8);
  CHECK(out.samples.size() == 3);
}

TEST_CASE("host measurements derive rates from declared work", "[measure]") {
  measure_options o;
  o.warmup = 0;
  o.min_samples = 3;
  o.max_samples = 3;
  o.min_time = 0;
  const auto m = measure_host("sleep", o, {1e6, 10, "things"}, [] {
    volatile double x = 0;
    for (int i = 0; i < 100000; ++i) x = x + 1;
  });
  CHECK(m.stats.count == 3);
  CHECK(m.clock == clock_kind::host);
  CHECK(m.rates["bytes_per_s"].get<double>() == Approx(1e6 / m.stats.median));
  CHECK(m.rates["items_per_s"].get<double>() == Approx(10 / m.stats.median));
}

TEST_CASE("stopping: an interruption ends sampling after the current sample, unconverged",
          "[measure]") {
  measure_options o;
  o.warmup = 2;
  o.min_samples = 10;
  o.min_time = 0;
  int calls = 0;
  // Interrupted while the fourth sample (the second after warm-up) is being taken.
  const auto out = sample_until_stable(o, counting(calls, 0.1), [&] { return calls >= 4; });
  CHECK(calls == 4);
  CHECK(out.samples.size() == 2);
  CHECK_FALSE(out.converged);
}

TEST_CASE("stopping: an interruption during warm-up leaves no sample", "[measure]") {
  measure_options o;
  o.warmup = 3;
  int calls = 0;
  const auto out = sample_until_stable(o, counting(calls, 0.1), [&] { return calls >= 1; });
  CHECK(calls == 1); // the warm-up sample under way finishes, nothing more runs
  CHECK(out.samples.empty());
  CHECK_FALSE(out.converged);
}

TEST_CASE("--l2-flush: each mode reads back from its name in any case; anything else is no mode",
          "[measure]") {
  for (const auto mode : {l2_flush_mode::read, l2_flush_mode::write, l2_flush_mode::none})
    CHECK(parse_l2_flush_mode(to_string(mode)) == mode);
  CHECK(to_string(l2_flush_mode::write) == "write");
  CHECK(parse_l2_flush_mode("Write") == l2_flush_mode::write);
  CHECK(parse_l2_flush_mode("NONE") == l2_flush_mode::none);
  CHECK_FALSE(parse_l2_flush_mode("").has_value());
  CHECK_FALSE(parse_l2_flush_mode("memset").has_value());
  CHECK(l2_flush_choices() == "read, write, none");
}

TEST_CASE("--l2-flush: read unless given; --warm is none", "[measure]") {
  measure_options o;
  CHECK(effective_l2_flush(o) == l2_flush_mode::read);
  o.l2_flush = l2_flush_mode::write;
  CHECK(effective_l2_flush(o) == l2_flush_mode::write);
  o.l2_flush = l2_flush_mode::none;
  CHECK(effective_l2_flush(o) == l2_flush_mode::none);
  o.l2_flush.reset();
  o.warm = true;
  CHECK(effective_l2_flush(o) == l2_flush_mode::none);
}
