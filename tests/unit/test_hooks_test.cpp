// The test-only hooks' seam (test_hooks.hpp): what each variable accepts, and that without them
// a measurement's body is its own and nothing is probed.
#include "gpubench/engine/test_hooks.hpp"

#include "gpubench/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace gpubench;

TEST_CASE("test hooks: GPUBENCH_TEST_SLOWDOWN's form", "[test_hooks]") {
  const auto t = parse_test_slowdown("end_to_end:10%");
  CHECK(t.measurement == "end_to_end");
  CHECK(t.fraction == Approx(0.10));
  CHECK(parse_test_slowdown("a:b:0.5").measurement == "a:b"); // the last colon splits
  for (const char* bad : {"end_to_end", ":0.1", "x:", "x:0", "x:11", "x:nan", "x:0.1s"})
    CHECK_THROWS_AS(parse_test_slowdown(bad), usage_error);
}

TEST_CASE("test hooks: GPUBENCH_INJECT_FAULT's form", "[test_hooks]") {
  const auto f = parse_injected_fault("vecadd:2");
  CHECK(f.benchmark == "vecadd");
  CHECK(f.point == 2);
  CHECK(f.kind == fault_kind::illegal_address);
  CHECK(parse_injected_fault("stream:1:bad_alloc").kind == fault_kind::bad_alloc);
  CHECK(parse_injected_fault("stream:1:thread_start").kind == fault_kind::thread_start);
  for (const char* bad : {"vecadd", "vecadd:0", "vecadd:x", "vecadd:1:melt", ":1"})
    CHECK_THROWS_AS(parse_injected_fault(bad), usage_error);
  // The benchmark is checked against the run's plan (check_fault_injection, tests/cli/
  // test_faults.py), not against a list of benchmarks: the engine knows none.
  CHECK(parse_injected_fault("nosuch:1").benchmark == "nosuch");
}

TEST_CASE("test hooks: without the knob a body is its own and nothing is probed", "[test_hooks]") {
  // The unit tests run without GPUBENCH_TEST_SLOWDOWN (ctest sets no such variable).
  REQUIRE_FALSE(test_hooks_from_env().slowdown);
  int probed = 0;
  int ran = 0;
  const std::function<void(cudaStream_t)> body = [&](cudaStream_t) { ++ran; };
  const auto same = test_slowdown_body("kernel", body, [&] {
    ++probed;
    return std::vector<double>{1e-3};
  });
  same(nullptr);
  CHECK(ran == 1);
  CHECK(probed == 0);
}
