// The runner's reporting of what a point returned: a measurement interrupted before its first
// sample has no data, so it must not be reported as one (docs/reliability.md, "SIGINT").
#include "gpubench/engine/runner.hpp"

#include "common.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/point.hpp"

#include <catch2/catch.hpp>

using namespace gpubench;
using Catch::Matchers::Contains;

namespace {

measurement with_samples(std::string name, std::vector<double> samples) {
  return test::finalized(std::move(name), std::move(samples));
}

/// Runs one CPU-only point of a benchmark whose point returns `returned`.
result run_one(const result& returned) {
  benchmark b;
  b.name = "fake";
  b.run_point = [returned](const point_view& /*point*/, run_context& /*ctx*/) { return returned; };
  common_options opts;
  opts.verbosity = 0;
  run_context ctx(opts);
  const std::vector<planned_point> points{{&b, nlohmann::json{{"n", 1}, {"device", -1}}}};
  const run_report rep = execute(points, ctx, {"gpubench", "fake"});
  REQUIRE(rep.results.size() == 1);
  return rep.results.front();
}

} // namespace

TEST_CASE("runner: a point whose measurements all have samples is reported as returned",
          "[runner]") {
  result returned;
  returned.measurements = {with_samples("kernel", {1e-3, 2e-3}),
                           with_samples("cpu_reference", {4e-3})};
  returned.derived["speedup_kernel_vs_cpu_reference"] = 2.0;
  const result r = run_one(returned);
  CHECK(r.status == result_status::ok);
  CHECK(r.reason.empty());
  REQUIRE(r.measurements.size() == 2);
  CHECK(r.derived.size() == 1);
  CHECK(r.device == -1);
}

TEST_CASE("runner: a measurement without samples is dropped, with the derived figures",
          "[runner]") {
  result returned;
  returned.measurements = {with_samples("kernel", {1e-3, 2e-3}), with_samples("h2d", {})};
  // Computed by the driver from h2d's median of 0 s: meaningless.
  returned.derived["fused_with_upload_images_per_s"] = 1e3;
  const result r = run_one(returned);
  CHECK(r.status == result_status::ok); // what is there was measured
  REQUIRE(r.measurements.size() == 1);
  CHECK(r.measurements.front().name == "kernel");
  CHECK(r.measurements.front().stats.count == 2);
  CHECK(r.derived.empty());
}

TEST_CASE("runner: a point with no sample at all is skipped, with the reason", "[runner]") {
  result returned;
  returned.measurements = {with_samples("cpu_reference", {})};
  returned.derived["speedup_kernel_vs_cpu_reference"] = 0.0;
  const result r = run_one(returned);
  CHECK(r.status == result_status::skipped);
  // Here without SIGINT (the flag cannot be cleared in this process); with it, the reason says
  // "interrupted (SIGINT) before the first sample of cpu_reference" (tests/cli/test_signals.py).
  CHECK(r.reason == "no sample was taken of cpu_reference");
  CHECK(r.measurements.empty());
  CHECK(r.derived.empty());
}

TEST_CASE("runner: a failed verification is kept when no measurement had a sample", "[runner]") {
  result returned;
  returned.status = result_status::failed;
  returned.reason = "GPU result differs from the CPU reference";
  returned.measurements = {with_samples("kernel", {})};
  const result r = run_one(returned);
  CHECK(r.status == result_status::failed);
  CHECK(r.reason == "GPU result differs from the CPU reference");
  CHECK(r.measurements.empty());
}

TEST_CASE("runner: a point stopped by SIGINT before any measurement is skipped", "[runner]") {
  // The signal arrives while the benchmark prepares its inputs: it returns without measuring.
  benchmark b;
  b.name = "fake";
  b.run_point = [](const point_view& /*point*/, run_context& /*ctx*/) {
    request_interrupt();
    return result{};
  };
  common_options opts;
  opts.verbosity = 0;
  run_context ctx(opts);
  const std::vector<planned_point> points{{&b, nlohmann::json{{"n", 1}, {"device", -1}}},
                                          {&b, nlohmann::json{{"n", 2}, {"device", -1}}}};
  const run_report rep = execute(points, ctx, {"gpubench", "fake"});
  clear_interrupt();
  REQUIRE(rep.results.size() == 1); // the second point never ran
  CHECK(rep.results.front().status == result_status::skipped);
  CHECK(rep.results.front().reason == "interrupted (SIGINT) before the first measurement");
  CHECK(rep.meta.incomplete);
  CHECK_THAT(rep.meta.incomplete_reason, Contains("SIGINT"));
}
