// The runner's error policy: whatever fails inside one point is recorded with that
// point, the results so far are kept and the sweep goes on; input errors still end the run.
#include "gpubench/engine/point.hpp"
#include "gpubench/engine/runner.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>

using namespace gpubench;
using Catch::Matchers::Contains;

namespace {

/// Runs three CPU-only points of a benchmark whose second point throws `fail`.
template <typename Throw>
run_report sweep_failing_in_the_middle(Throw fail) {
  benchmark b;
  b.name = "fake";
  b.run_point = [fail](const point_view& point, run_context& /*ctx*/) {
    if (point.values().at("n") == 2) fail();
    result r;
    r.params = point.values();
    measurement m;
    m.name = "work";
    m.samples = {1e-3, 1e-3};
    finalize(m);
    r.measurements.push_back(m);
    return r;
  };
  common_options opts;
  opts.verbosity = 0;
  run_context ctx(opts);
  std::vector<planned_point> points;
  for (int n = 1; n <= 3; ++n) points.push_back({&b, nlohmann::json{{"n", n}, {"device", -1}}});
  return execute(points, ctx, {"gpubench", "fake"});
}

void check_sweep_went_on(const run_report& rep, result_status middle, const std::string& why) {
  REQUIRE(rep.results.size() == 3);
  CHECK(rep.results[0].status == result_status::ok);
  CHECK(rep.results[1].status == middle);
  CHECK_THAT(rep.results[1].reason, Contains(why));
  CHECK(rep.results[2].status == result_status::ok);
  CHECK_FALSE(rep.meta.incomplete);
  CHECK(exit_code_for(rep) == exit_code::cuda); // 3: a point was skipped or failed to run
}

} // namespace

TEST_CASE("policy: std::bad_alloc in a point skips that point as out of host memory", "[policy]") {
  const auto rep = sweep_failing_in_the_middle([] { throw std::bad_alloc(); });
  check_sweep_went_on(rep, result_status::skipped, "out of host memory");
}

TEST_CASE("policy: host memory that cannot be had skips the point, not as a CUDA error",
          "[policy]") {
  const auto rep =
      sweep_failing_in_the_middle([] { throw host_memory_error("fake needs 900 GB"); });
  check_sweep_went_on(rep, result_status::skipped, "out of host memory: fake needs 900 GB");
  CHECK_THAT(rep.results[1].reason, !Contains("CUDA"));
}

TEST_CASE("policy: a thread that cannot start is an error of that point", "[policy]") {
  const auto rep = sweep_failing_in_the_middle(
      [] { throw std::system_error(EAGAIN, std::generic_category(), "thread"); });
  check_sweep_went_on(rep, result_status::error, "system error");
}

TEST_CASE("policy: a failed precondition is an error of that point with where and why",
          "[policy]") {
  const auto rep = sweep_failing_in_the_middle([] {
    const int lanes = 3;
    GPUBENCH_EXPECTS(lanes % 2 == 0, "lanes must be even");
  });
  check_sweep_went_on(rep, result_status::error, "precondition failed: lanes must be even");
  CHECK_THAT(rep.results[1].reason, Contains("lanes % 2 == 0") && Contains("error_policy_test"));
}

TEST_CASE("policy: a launcher's invalid argument is an error of that point", "[policy]") {
  const auto rep = sweep_failing_in_the_middle(
      [] { throw std::invalid_argument("augment: f64 output is not offered"); });
  check_sweep_went_on(rep, result_status::error, "invalid argument: augment: f64 output");
}

TEST_CASE("policy: a std::runtime_error inside a point is an error of that point", "[policy]") {
  const auto rep =
      sweep_failing_in_the_middle([] { throw std::runtime_error("the fake lost its way"); });
  check_sweep_went_on(rep, result_status::error, "unexpected error: the fake lost its way");
}

TEST_CASE("policy: a JSON error inside a point is an error of that point", "[policy]") {
  const auto rep = sweep_failing_in_the_middle([] {
    const nlohmann::json value = "not a number";
    (void)value.get<int>(); // throws nlohmann::json::type_error
  });
  check_sweep_went_on(rep, result_status::error, "unexpected error: [json.exception.type_error");
}

TEST_CASE("policy: an input error still ends the run (exit 2 from main)", "[policy]") {
  CHECK_THROWS_AS(sweep_failing_in_the_middle([] { throw usage_error("bad"); }), usage_error);
}

TEST_CASE("policy: a missing GPU still ends the run (exit 77 from main)", "[policy]") {
  CHECK_THROWS_AS(sweep_failing_in_the_middle([] { throw cuda::no_device_error("no GPU"); }),
                  cuda::no_device_error);
}

TEST_CASE("a signal's number decides the reason and the exit code", "[policy][signal]") {
  for (const auto& [sig, name, code] :
       {std::tuple{2, "SIGINT", 130}, std::tuple{15, "SIGTERM", 143},
        std::tuple{1, "SIGHUP", 129}}) {
    INFO(name);
    clear_interrupt();
    request_interrupt(sig);
    request_interrupt(2); // a later signal changes neither
    CHECK(std::string(interrupt_signal_name()) == name);
    run_report rep;
    rep.meta.incomplete = true;
    CHECK(exit_code_for(rep) == code);
  }
  clear_interrupt();
}
