// Aggregates of a multi-GPU run (docs/multi-gpu.md): sums, spreads, straggler ratio, start skew,
// per-node sums, shared GPUs, and the merged report's round trip through JSON.
#include "gpubench/report/multi_gpu_report.hpp"
#include "gpubench/scale/multi_gpu_merge.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <sstream>

using namespace gpubench;

namespace {

using gpubench::test::fresh_seed;

/// A result of one point whose only measurement has median `median_s` over 1 MB and 1000 items.
result point_result(double median_s, int n = 1) {
  result r;
  r.benchmark = "vecadd";
  r.params = {{"n", n}};
  r.measurements.push_back(test::finalized("kernel", {median_s, median_s, median_s}));
  return r;
}

rank_run rank_with(int rank, std::string host, std::vector<double> medians,
                   std::vector<std::optional<double>> starts = {}) {
  rank_run run;
  run.who.rank = rank;
  run.who.host = std::move(host);
  run.report.meta.host.name = run.who.host;
  for (std::size_t i = 0; i < medians.size(); ++i)
    run.report.results.push_back(point_result(medians[i], static_cast<int>(i)));
  run.point_start_s = std::move(starts);
  return run;
}

} // namespace

TEST_CASE("multi-GPU aggregate: rates add up, times spread, the straggler is max over median",
          "[multi_gpu]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> time(1e-4, 1e-2);
  const int n = 1 + static_cast<int>(rng() % 7);
  std::vector<measurement> ms;
  for (int i = 0; i < n; ++i) ms.push_back(test::finalized("kernel", {time(rng)}));
  std::vector<const measurement*> members;
  for (const auto& m : ms) members.push_back(&m);
  const auto a = aggregate_measurement(members, std::vector<std::string>(n, "node"));

  std::vector<double> t;
  double bytes_sum = 0;
  for (const auto& m : ms) {
    t.push_back(m.stats.median);
    bytes_sum += 1e6 / m.stats.median;
  }
  std::sort(t.begin(), t.end());
  const double median = n % 2 == 1 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  CHECK(a["ranks"] == n);
  CHECK(a["median_s"]["min"].get<double>() == t.front());
  CHECK(a["median_s"]["max"].get<double>() == t.back());
  CHECK(a["median_s"]["median"].get<double>() == Approx(median));
  CHECK(a["straggler_ratio"].get<double>() == Approx(t.back() / median));
  CHECK(a["rates"]["bytes_per_s"]["sum"].get<double>() == Approx(bytes_sum));
  CHECK(a["rates"]["items_per_s"]["max"].get<double>() == Approx(1e3 / t.front()));
  CHECK_FALSE(a.contains("nodes")); // one host: no per-node breakdown
}

TEST_CASE("multi-GPU aggregate: per-node sums and the slowest node over the median node",
          "[multi_gpu]") {
  const auto m1 = test::finalized("kernel", {1e-3}); // 1 GB/s
  const auto m2 = test::finalized("kernel", {2e-3}); // 0.5 GB/s
  const auto m3 = test::finalized("kernel", {4e-3}); // 0.25 GB/s
  const auto a = aggregate_measurement({&m1, &m2, &m3}, {"a", "a", "b"});
  REQUIRE(a["nodes"].size() == 2);
  CHECK(a["nodes"][0]["host"] == "a");
  CHECK(a["nodes"][0]["rates"]["bytes_per_s"].get<double>() == Approx(1.5e9));
  CHECK(a["nodes"][1]["rates"]["bytes_per_s"].get<double>() == Approx(0.25e9));
  // Slowest rank per node: 2 ms and 4 ms; their median is 3 ms.
  CHECK(a["node_straggler_ratio"].get<double>() == Approx(4.0 / 3.0));
}

TEST_CASE("multi-GPU merge: results interleaved by point, rank and host on each, start skew from "
          "the ranks' clocks",
          "[multi_gpu]") {
  std::vector<rank_run> runs;
  runs.push_back(rank_with(1, "b", {2e-3, 2e-3}, {10.000, 20.003}));
  runs.push_back(rank_with(0, "a", {1e-3, 1e-3}, {10.002, 20.000}));
  const auto rep = merge_rank_runs(std::move(runs), "mpi");
  REQUIRE(rep.results.size() == 4);
  CHECK(rep.results[0].rank == 0);
  CHECK(rep.results[0].host == "a");
  CHECK(rep.results[1].rank == 1);
  CHECK(rep.results[2].params["n"] == 1);
  CHECK(rep.aggregate["mode"] == "mpi");
  CHECK(rep.aggregate["ranks"] == 2);
  CHECK(rep.aggregate["nodes"] == 2);
  REQUIRE(rep.aggregate["points"].size() == 2);
  CHECK(rep.aggregate["points"][0]["start_skew_s"].get<double>() == Approx(0.002));
  CHECK(rep.aggregate["points"][1]["start_skew_s"].get<double>() == Approx(0.003));
  const auto& kernel = rep.aggregate["points"][0]["measurements"][0];
  CHECK(kernel["rates"]["bytes_per_s"]["sum"].get<double>() == Approx(1.5e9));
  CHECK(kernel["straggler_ratio"].get<double>() == Approx(2e-3 / 1.5e-3));
  CHECK_FALSE(rep.meta.incomplete);

  // What is written is read back, multi-GPU fields included.
  const auto back = report_from_json(to_json(rep));
  REQUIRE(back.results.size() == 4);
  CHECK(back.results[3].rank == 1);
  CHECK(back.results[3].host == "b");
  CHECK(back.aggregate == rep.aggregate);
  CHECK(back.ranks == rep.ranks);
}

TEST_CASE("multi-GPU merge: ranks on one GPU are flagged, a lost rank makes the run incomplete",
          "[multi_gpu]") {
  std::vector<rank_run> runs;
  for (int r = 0; r < 3; ++r) {
    auto run = rank_with(r, "node", {1e-3});
    run.who.local_device = 0;
    run.report.results.front().device = 0; // each rank's own ordinal 0
    run.who.uuid = r < 2 ? "GPU-same" : "GPU-other";
    cuda::device_info info;
    info.id = 0;
    info.name = "H200";
    info.pci_bus_id = r < 2 ? "0000:01:00.0" : "0000:02:00.0";
    run.report.devices.push_back({info, {}, {}, {}});
    runs.push_back(std::move(run));
  }
  rank_run lost;
  lost.who.rank = 3;
  lost.who.host = "node";
  lost.who.status = "lost";
  lost.who.reason = "did not reach point 2 within 3 s";
  runs.push_back(std::move(lost));
  const auto rep = merge_rank_runs(std::move(runs), "mpi");
  REQUIRE(rep.ranks.size() == 4);
  CHECK(rep.ranks[0]["shares_gpu"] == true);
  CHECK(rep.ranks[0]["shares_gpu_with"] == nlohmann::json::array({1}));
  CHECK(rep.ranks[1]["shares_gpu"] == true);
  CHECK(rep.ranks[2]["shares_gpu"] == false);
  CHECK(rep.aggregate["ranks_sharing_a_gpu"] == 2);
  // Two physical GPUs, numbered in rank order; each result points at its own.
  REQUIRE(rep.devices.size() == 2);
  CHECK(rep.results[1].device == 0);
  CHECK(rep.results[2].device == 1);
  CHECK(rep.ranks[3]["status"] == "lost");
  CHECK(rep.meta.incomplete);
  CHECK_THAT(rep.meta.incomplete_reason,
             Catch::Matchers::Contains("rank 3 (lost): did not reach point 2"));
  CHECK(rep.aggregate["points"][0]["ranks"] == 3); // the lost rank has no result
}

TEST_CASE("multi-GPU table: each point's parameters once, as a header, every line in 120 columns",
          "[multi_gpu]") {
  std::vector<rank_run> runs;
  for (int rank = 0; rank < 4; ++rank) {
    auto run = rank_with(rank, "node", {1e-3 * (1 + rank), 2e-3});
    for (auto& r : run.report.results) {
      // A long parameter list, as augment's 14 parameters make.
      r.benchmark = "augment";
      for (const char* k : {"crop", "resize", "degrees", "blur", "interp", "out-dtype", "impl"})
        r.params[k] = "a-rather-long-value";
      r.measurements.push_back(test::finalized("end_to_end_overlapped", {3e-3, 3.1e-3}));
    }
    runs.push_back(std::move(run));
  }
  const auto rep = merge_rank_runs(std::move(runs), "concurrent");
  std::ostringstream os;
  write_multi_gpu_summary(os, rep, output_format::table);
  const std::string text = os.str();
  std::istringstream lines(text);
  int parameter_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 120);
    if (line.find("crop=") != std::string::npos) ++parameter_lines;
  }
  CHECK(parameter_lines == 2); // two points, each with two measurements
  CHECK(text.find("end_to_end_overlapped") != std::string::npos);
}
