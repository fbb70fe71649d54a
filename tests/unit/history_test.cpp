// A history's groups, their order and the comparison of consecutive runs (gate/history.cpp),
// which the HTML page draws without running compare itself.
#include "gpubench/gate/compare.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace gpubench;
using nlohmann::json;

namespace {

/// A run of vecadd on GPU `gpu_name` started at `started` ("" for none) whose kernel takes
/// `seconds` (30 samples, 1% apart).
result_file run(const std::string& gpu_name, const std::string& started, double seconds) {
  run_report r;
  device_record d;
  d.info.id = 0;
  d.info.name = gpu_name;
  r.devices = {d};
  r.meta.started_at = started;
  result res;
  res.benchmark = "vecadd";
  res.device = 0;
  res.params = {{"n", 1000}, {"dtype", "f32"}};
  measurement m;
  m.name = "kernel";
  for (int i = 0; i < 30; ++i) m.samples.push_back(seconds * (1 + 0.01 * (i % 3)));
  finalize(m);
  res.measurements.push_back(m);
  r.results.push_back(res);
  return as_result_file(r, gpu_name + " " + started);
}

} // namespace

TEST_CASE("history: one group per GPU set, runs by start time, consecutive pairs judged",
          "[compare][history]") {
  const std::vector<result_file> files{
      run("H200", "2026-12-03T10:00:00Z", 1e-3), run("A100", "2026-12-01T10:00:00Z", 2e-3),
      run("H200", "2026-12-01T10:00:00Z", 1e-3), run("H200", "2026-12-04T10:00:00Z", 1.3e-3)};
  const json plan = history_comparisons(files);
  REQUIRE(plan["groups"].size() == 2);
  const json& h200 = plan["groups"][0]; // the group met first
  CHECK(h200["files"] == json::array({2, 0, 3}));
  CHECK(h200["dated"] == true);
  REQUIRE(h200["comparisons"].size() == 2);
  const auto verdict_of = [](const json& cmp) { return cmp["rows"].at(0)["verdict"]; };
  // Equal runs, one a side: not a change (compare says inconclusive: between-run noise unknown).
  CHECK(verdict_of(h200["comparisons"][0]) != "slower");
  CHECK(verdict_of(h200["comparisons"][0]) != "faster");
  CHECK(verdict_of(h200["comparisons"][1]) == "slower");
  const json& a100 = plan["groups"][1];
  CHECK(a100["files"] == json::array({1}));
  CHECK(a100["comparisons"].empty());
}

TEST_CASE("history: without a date on every run, the order given stands", "[compare][history]") {
  const std::vector<result_file> files{run("H200", "2026-12-04T10:00:00Z", 1e-3),
                                       run("H200", "", 1e-3), run("H200", "2026-12-01", 1e-3)};
  const json plan = history_comparisons(files);
  REQUIRE(plan["groups"].size() == 1);
  CHECK(plan["groups"][0]["files"] == json::array({0, 1, 2}));
  CHECK(plan["groups"][0]["dated"] == false);
  CHECK(plan["groups"][0]["comparisons"].size() == 2);
}
