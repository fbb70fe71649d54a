// What the GPU was doing, as tables and result files show it: the stop column and its legend,
// the telemetry line and its '*' marker, the host-bound '^', energy lines, CPU reference
// descriptions, and the JSON round trip of every new field (older files without them still read).
#include "gpubench/report/report.hpp"
#include "gpubench/results/result.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace gpubench;
using nlohmann::json;

namespace {

run_report report_with(std::vector<measurement> ms) {
  run_report rep;
  rep.meta.version = "0.1.0";
  rep.meta.started_at = "2026-12-01T00:00:00Z";
  device_record d;
  d.info.id = 0;
  d.info.name = "NVIDIA H200";
  d.info.cc_major = 9;
  rep.devices.push_back(d);
  result r;
  r.benchmark = "vecadd";
  r.device = 0;
  r.params = {{"n", 1048576}};
  r.measurements = std::move(ms);
  rep.results.push_back(std::move(r));
  return rep;
}

std::string table(const run_report& rep) {
  std::ostringstream os;
  write_report(os, rep, output_format::table);
  return os.str();
}

/// The table with the legend's wrapped lines joined, so that a phrase split by the wrap is found.
std::string unwrapped(const std::string& text) {
  std::string out;
  const auto legend = text.find("Legend: ");
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (legend != std::string::npos && i > legend && text.compare(i, 3, "\n  ") == 0) {
      out += ' ';
      i += 2;
      continue;
    }
    out += text[i];
  }
  return out;
}

json flagged_telemetry() {
  telemetry_observation o;
  o.duration_s = 1;
  o.own_pid = 1;
  o.pids_seen = {1, 2};
  o.readings.push_back({1980U, 2619U, 61U, 0U});
  return summarize_telemetry(o);
}

} // namespace

TEST_CASE("table: the stop column says why sampling ended, with a legend", "[report]") {
  auto stable = test::finalized("kernel", {1e-5, 1.1e-5});
  stable.clock = clock_kind::gpu;
  stable.stopped = stop_reason::stable;
  stable.converged = true;
  auto capped = test::finalized("cpu_reference", {1e-3, 2e-3});
  capped.clock = clock_kind::host;
  capped.stopped = stop_reason::max_samples;
  const auto text = unwrapped(table(report_with({stable, capped})));
  CHECK(text.find(" stable ") != std::string::npos);
  CHECK(text.find(" max-n ") != std::string::npos);
  // The legend explains the stop reasons that occur, and only those.
  CHECK(text.find("stable = stopped with the mean's 95% interval") != std::string::npos);
  CHECK(text.find("max-n = a limit ended sampling") != std::string::npos);
  CHECK(text.find("noise = ") == std::string::npos);
  CHECK(text.find("^ = ") == std::string::npos);
  CHECK(text.find("* = ") == std::string::npos);
  CHECK(text.find("gpu = CUDA events") != std::string::npos);
  CHECK(text.find("host = the host's steady clock") != std::string::npos);
  CHECK(text.find("ts = ") == std::string::npos);
}

TEST_CASE("table: the legend fits 120 columns, on lines of its own", "[report]") {
  auto paced = test::finalized("serial", {1.5e-4, 1.6e-4});
  paced.host_bound = true;
  paced.telemetry = flagged_telemetry();
  paced.stopped = stop_reason::timeout;
  auto noisy = test::finalized("cpu_reference", {1e-3, 2e-3});
  noisy.clock = clock_kind::host;
  noisy.stopped = stop_reason::noise;
  const auto text = table(report_with({paced, noisy}));
  const auto at = text.find("Legend: ");
  REQUIRE(at != std::string::npos);
  std::istringstream legend(text.substr(at));
  int lines = 0;
  for (std::string line; std::getline(legend, line); ++lines) CHECK(line.size() <= 120);
  CHECK(lines >= 2);
  CHECK(text.find("* = telemetry flagged") != std::string::npos);
  CHECK(text.find("noise = stopped at rel.sd <= --max-noise") != std::string::npos);
}

TEST_CASE("table: flagged telemetry marks the row and prints why", "[report]") {
  auto m = test::finalized("kernel", {1e-5, 1.1e-5});
  m.telemetry = flagged_telemetry();
  // The notes wrap at 120 columns: their continuation lines (newline, four spaces) joined back.
  auto text = table(report_with({m}));
  for (auto at = text.find("\n    "); at != std::string::npos; at = text.find("\n    ", at))
    text.replace(at, 5, " ");
  CHECK(text.find("kernel *") != std::string::npos);
  CHECK(text.find("[kernel] telemetry: SM 1980/1980 MHz") != std::string::npos);
  CHECK(text.find("other processes: 1") != std::string::npos);
  CHECK(text.find("[flags: contention]") != std::string::npos);
}

TEST_CASE("table: a host-bound row is marked '^', with the legend saying what that means",
          "[report]") {
  auto paced = test::finalized("serial", {1.5e-4, 1.6e-4});
  paced.timing = gpu_timing::includes_launch;
  paced.host_bound = true;
  auto graph = test::finalized("graph", {1.07e-4, 1.08e-4});
  graph.timing = gpu_timing::includes_launch;
  auto both = test::finalized("streams", {1.3e-4, 1.4e-4});
  both.host_bound = true;
  both.telemetry = flagged_telemetry();
  const auto text = unwrapped(table(report_with({paced, graph, both})));
  CHECK(text.find("serial ^") != std::string::npos);
  CHECK(text.find("graph ^") == std::string::npos);
  CHECK(text.find("streams *^") != std::string::npos);
  CHECK(text.find("^ = host-bound: the host's launches paced the GPU") != std::string::npos);
}

TEST_CASE("table: unavailable telemetry and unsupported energy say why", "[report]") {
  auto m = test::finalized("kernel", {1e-5, 1.1e-5});
  m.telemetry = json{{"available", false}, {"reason", "cannot load libnvidia-ml.so.1"}};
  m.energy = json{{"supported", false}, {"reason", "cannot load libnvidia-ml.so.1"}};
  auto cpu = test::finalized("cpu_reference", {1e-3, 1e-3});
  cpu.clock = clock_kind::host;
  cpu.description = "16 threads, native f32 add";
  const auto text = table(report_with({m, cpu}));
  CHECK(text.find("telemetry: unavailable (cannot load libnvidia-ml.so.1)") != std::string::npos);
  CHECK(text.find("[kernel] energy: unsupported (cannot load libnvidia-ml.so.1)") !=
        std::string::npos);
  CHECK(text.find("[cpu_reference] is 16 threads, native f32 add") != std::string::npos);
  CHECK(text.find("kernel *") == std::string::npos);
}

TEST_CASE("result files: the telemetry fields survive a round trip and are optional", "[report]") {
  auto m = test::finalized("kernel", {1e-5, 1.1e-5, 1.2e-5});
  m.stopped = stop_reason::timeout;
  m.timing = gpu_timing::batch;
  m.batch_launches = 400;
  m.invalid_samples = 2;
  m.telemetry = flagged_telemetry();
  m.energy = json{{"supported", true}, {"j_per_op", 1e-9}};
  auto cpu = test::finalized("cpu_reference", {1e-3});
  cpu.clock = clock_kind::host;
  cpu.description = "4 threads";
  const auto j = to_json(report_with({m, cpu}));
  const auto back = report_from_json(j);
  const auto& k = back.results.at(0).measurements.at(0);
  CHECK(k.stopped == stop_reason::timeout);
  CHECK(k.timing == gpu_timing::batch);
  CHECK(k.batch_launches == 400);
  CHECK(k.invalid_samples == 2);
  CHECK(k.telemetry == m.telemetry);
  CHECK(k.energy == m.energy);
  CHECK(back.results.at(0).measurements.at(1).description == "4 threads");
  CHECK(to_json(back) == j);

  json old = j;
  for (auto& x : old["results"][0]["measurements"])
    for (const char* key : {"stop_reason", "timing", "batch_launches", "invalid_samples",
                            "telemetry", "energy", "description"})
      x.erase(key);
  const auto plain = report_from_json(old).results.at(0).measurements.at(0);
  CHECK_FALSE(plain.stopped.has_value());
  CHECK(plain.telemetry.empty());
}

TEST_CASE("tables: a timestamps row says its clock, and the timing survives a round trip",
          "[report]") {
  auto events = test::finalized("kernel", {4.6e-6, 4.7e-6});
  events.cold = false;
  auto ts = test::finalized("kernel (timestamps)", {2.3e-6, 2.4e-6});
  ts.cold = false;
  ts.timing = gpu_timing::timestamps;
  auto cold_ts = test::finalized("fused (timestamps)", {1.2e-4, 1.3e-4});
  cold_ts.timing = gpu_timing::timestamps;
  const auto rep = report_with({events, ts, cold_ts});
  const auto text = unwrapped(table(rep));
  INFO(text);
  CHECK(text.find("gpu/w") != std::string::npos);
  CHECK(text.find("ts/w") != std::string::npos);
  CHECK(text.find(" ts ") != std::string::npos);
  CHECK(text.find("ts = the GPU's own kernel timestamps") != std::string::npos);
  const auto back = report_from_json(to_json(rep));
  CHECK(back.results.at(0).measurements.at(1).timing == gpu_timing::timestamps);
}

TEST_CASE("table: an entropy stop and discarded throttled samples are said, and survive a file",
          "[report]") {
  auto m = test::finalized("kernel", {1e-5, 1.1e-5, 1.2e-5});
  m.stopped = stop_reason::entropy;
  m.converged = true;
  m.stopping = json{{"rule", "entropy"}, {"angle_deg", 0.01}, {"r2", 0.9}};
  m.throttled = json{{"fraction", 0.95},  {"applied", true}, {"median_sm_clock_mhz", 1980.0},
                     {"with_reading", 2}, {"kept", 3},       {"rejected", 1}};
  m.sm_clock = json{{"source", "gpu"}, {"median_mhz", 1980.0}, {"min_mhz", 1965.0},
                    {"samples", 3},    {"unresolved", 0},      {"resolution_ns", 32.0}};
  auto none = test::finalized("h2d", {1e-5, 1.1e-5});
  none.throttled = json{{"fraction", 0.95}, {"applied", true}, {"kept", 2}, {"rejected", 0}};
  const auto text = unwrapped(table(report_with({m, none})));
  CHECK(text.find(" entropy ") != std::string::npos);
  CHECK(text.find("entropy = stopped when the samples' entropy stopped growing") !=
        std::string::npos);
  CHECK(text.find("[kernel] throttled: 1 of 4 samples discarded (SM clock on the GPU below 95% "
                  "of its running median, 1980 MHz") != std::string::npos);
  CHECK(text.find("[h2d] throttled") == std::string::npos); // nothing dropped: no line
  const auto j = to_json(report_with({m}));
  const auto back = report_from_json(j).results.at(0).measurements.at(0);
  CHECK(back.stopped == stop_reason::entropy);
  CHECK(back.stopping == m.stopping);
  CHECK(back.throttled == m.throttled);
  CHECK(back.sm_clock == m.sm_clock);
  CHECK(j["results"][0]["measurements"][0].contains("throttled_samples"));
  CHECK(j["results"][0]["measurements"][0].contains("sm_clock"));
}
