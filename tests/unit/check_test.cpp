// gpubench check's rules without a GPU (lib/src/check/): the verdict against a measured reference
// (the gate's interval, each limit just inside and just outside), against the theoretical figure,
// the state rules (a link below its maximum, ECC, the power limit, NVML missing), reference files
// (strict reading, building one from runs), the fleet rule, and the formats.
#include "gpubench/check/check.hpp"
#include "gpubench/check/check_report.hpp"
#include "gpubench/check/check_suite.hpp"
#include "gpubench/core/errors.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <sstream>

using namespace gpubench;
using nlohmann::json;

namespace {

/// A bandwidth row of `n` samples around `bytes_per_s`, each within +-`jitter` (relative).
measurement bandwidth_row(const std::string& name, double bytes_per_s, int n = 50,
                          double jitter = 0.002, unsigned seed = 1) {
  measurement m;
  m.name = name;
  m.work.bytes = 3.0 * (1U << 30U);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  for (int i = 0; i < n; ++i) m.samples.push_back(m.work.bytes / (bytes_per_s * (1 + u(gen))));
  m.stats = summarize(m.samples);
  return m;
}

/// A launch round trip's row: 200 samples of about 5 us (a few ticks apart), times `scale`.
measurement launch_row(double scale = 1) {
  measurement m;
  m.name = "launch";
  m.clock = clock_kind::host;
  for (int i = 0; i < 200; ++i) m.samples.push_back((5e-6 + 1e-8 * (i % 7)) * scale);
  m.stats = summarize(m.samples);
  return m;
}

reference_entry reference_of(const measurement& m, const check_spec& spec, double spread) {
  reference_entry e;
  e.samples = row_sample_figures(spec, m);
  e.median = *row_figure(spec, m);
  e.spread = spread;
  e.runs = 10;
  return e;
}

const check_spec& spec(std::string_view id) {
  const auto* s = find_check_spec(id);
  REQUIRE(s != nullptr);
  return *s;
}

} // namespace

TEST_CASE("check: a healthy figure passes, a 5% slower HBM fails, in between warns", "[check]") {
  const auto& triad = spec("hbm_triad");
  const auto ref = reference_of(bandwidth_row("triad", 4.4e12, 50, 0.002, 7), triad, 0.003);
  // Ten healthy repeats, each with its own noise: every one passes.
  for (unsigned seed = 10; seed < 20; ++seed) {
    const auto o =
        judge_measured(triad, bandwidth_row("triad", 4.4e12 * 0.998, 50, 0.002, seed), ref, "test");
    CHECK(o.verdict == check_verdict::pass);
    REQUIRE(o.ratio);
    CHECK(*o.ratio == Approx(0.998).epsilon(0.002));
  }
  // 5% slower: the whole interval lies past 3% + the reference's spread.
  const auto slow = judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.05), ref, "test");
  CHECK(slow.verdict == check_verdict::fail);
  CHECK_THAT(slow.reason, Catch::Contains("HBM triad") && Catch::Contains("limit 3.0%"));
  // 2% slower: past the warning line, not past the failing one; the reason says what was judged.
  const auto warn = judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.02), ref, "test");
  CHECK(warn.verdict == check_verdict::warn);
  CHECK_THAT(warn.reason, Catch::Contains("; samples 2.0% slower, 95% interval ") &&
                              Catch::Contains("warns past 1.8%"));
  // Each limit just inside and just outside, each with the reference's 0.3% spread: 1.7% passes,
  // 1.9% warns; 3.2% warns, 3.6% fails.
  CHECK(
      judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.017, 50, 0.0005), ref, "t").verdict ==
      check_verdict::pass);
  CHECK(
      judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.019, 50, 0.0005), ref, "t").verdict ==
      check_verdict::warn);
  CHECK(
      judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.032, 50, 0.0005), ref, "t").verdict ==
      check_verdict::warn);
  CHECK(
      judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.036, 50, 0.0005), ref, "t").verdict ==
      check_verdict::fail);
  // Faster than the reference passes.
  CHECK(judge_measured(triad, bandwidth_row("triad", 4.4e12 * 1.1), ref, "t").verdict ==
        check_verdict::pass);
}

TEST_CASE("check: the reference's samples are centred on its median", "[check]") {
  // A reference whose sample run streamed 4% faster than the median of its runs: a run at that
  // median passes (the shift is taken from the median, the ratio the reason shows), and a run 5%
  // below the median fails.
  const auto& triad = spec("hbm_triad");
  auto ref = reference_of(bandwidth_row("triad", 4.4e12 * 1.04, 50, 0.002, 7), triad, 0.003);
  ref.median = 4.4e12;
  const auto at = judge_measured(triad, bandwidth_row("triad", 4.4e12, 50, 0.002, 8), ref, "t");
  INFO(at.reason);
  CHECK(at.verdict == check_verdict::pass);
  const auto slow =
      judge_measured(triad, bandwidth_row("triad", 4.4e12 / 1.05, 50, 0.002, 9), ref, "t");
  INFO(slow.reason);
  CHECK(slow.verdict == check_verdict::fail);
  // A figure 1/1.05 of the median, a cost 5% above it.
  CHECK_THAT(slow.reason, Catch::Contains("-4.8%; samples 5.0% slower"));
}

TEST_CASE("check: a figure that varies between healthy runs warns only past that spread too",
          "[check]") {
  // PCIe both ways on the H200's host: ten healthy runs spread 14.6% between them. A run 16%
  // below the median is one of them (passes); one 25% below warns; one 40% below fails.
  const auto& both = spec("pcie_both");
  const auto ref = reference_of(bandwidth_row("both", 92.4e9, 150, 0.02, 3), both, 0.146);
  const auto judged = [&](double figure, unsigned seed) {
    return judge_measured(both, bandwidth_row("both", figure, 150, 0.02, seed), ref, "t");
  };
  const auto healthy = judged(92.4e9 / 1.16, 4);
  INFO(healthy.reason);
  CHECK(healthy.verdict == check_verdict::pass);
  const auto slower = judged(92.4e9 / 1.25, 5);
  INFO(slower.reason);
  CHECK(slower.verdict == check_verdict::warn);
  CHECK_THAT(slower.reason, Catch::Contains("warns past 19.6%"));
  CHECK(judged(92.4e9 / 1.4, 6).verdict == check_verdict::fail);
}

TEST_CASE("check: a latency is judged the other way up", "[check]") {
  const auto& launch = spec("launch_latency");
  const measurement base = launch_row();
  const auto ref = reference_of(base, launch, 0.05);
  CHECK(ref.median == Approx(base.stats.median));
  const measurement slow = launch_row(2);
  CHECK(judge_measured(launch, base, ref, "t").verdict == check_verdict::pass);
  CHECK(judge_measured(launch, slow, ref, "t").verdict == check_verdict::fail);
  // Against the theoretical bound of 20 us: 5 us passes, 21 us warns, 30 us fails.
  const theoretical_figure bound{20e-6, "a bound of 20 us"};
  CHECK(judge_theoretical(launch, base, bound).verdict == check_verdict::pass);
  measurement at21 = base;
  for (auto& s : at21.samples) s = 21e-6;
  at21.stats = summarize(at21.samples);
  CHECK(judge_theoretical(launch, at21, bound).verdict == check_verdict::warn);
  measurement at30 = at21;
  for (auto& s : at30.samples) s = 30e-6;
  at30.stats = summarize(at30.samples);
  CHECK(judge_theoretical(launch, at30, bound).verdict == check_verdict::fail);
}

TEST_CASE("check: against other hosts' reference, a host-dependent figure fails only at its floor",
          "[check]") {
  // PCIe both ways on a host that carries less than the shipped reference's hosts: each direction
  // alone at the reference, both at once 17% short (measured so on one H100 host).
  const auto& both = spec("pcie_both");
  REQUIRE(both.host_dependent);
  CHECK_FALSE(spec("hbm_triad").host_dependent);
  const auto ref = reference_of(bandwidth_row("both", 88.3e9, 50, 0.01, 3), both, 0.073);
  const theoretical_figure link{126.0e9, "PCIe Gen5 x16, both ways"};
  const auto short_host = bandwidth_row("both", 73.2e9);
  // Held to a reference of one's own (no floor given): it fails, as before.
  CHECK(judge_measured(both, short_host, ref, "ours.json of 2026-12-05").verdict ==
        check_verdict::fail);
  // Held to the shipped one: it warns, naming why and the line it would fail at (45% of 126).
  const auto held = judge_measured(both, short_host, ref, "shipped of 2026-12-05", &link);
  CHECK(held.verdict == check_verdict::warn);
  CHECK_THAT(held.reason, Catch::Contains("other hosts") && Catch::Contains("below 56.7 GB/s") &&
                              Catch::Contains("slot"));
  // Just above and just below that line (0.9 x 50% x 126 GB/s = 56.7 GB/s).
  CHECK(judge_measured(both, bandwidth_row("both", 57.2e9, 50, 0.001), ref, "s", &link).verdict ==
        check_verdict::warn);
  const auto broken =
      judge_measured(both, bandwidth_row("both", 56.2e9, 50, 0.001), ref, "s", &link);
  CHECK(broken.verdict == check_verdict::fail);
  CHECK_THAT(broken.reason, Catch::Contains("fails, being below"));
  // A figure within the reference's limits passes whatever the floor.
  CHECK(judge_measured(both, bandwidth_row("both", 88.0e9), ref, "s", &link).verdict ==
        check_verdict::pass);
  // A latency the other way up: twice the reference's 5 us warns under the 20 us bound's 22.2 us,
  // and fails past it.
  const auto& launch = spec("launch_latency");
  const auto launch_ref = reference_of(launch_row(), launch, 0.05);
  const theoretical_figure bound{20e-6, "a bound of 20 us"};
  CHECK(judge_measured(launch, launch_row(2), launch_ref, "s", &bound).verdict ==
        check_verdict::warn);
  CHECK(judge_measured(launch, launch_row(4.6), launch_ref, "s", &bound).verdict ==
        check_verdict::fail);
}

TEST_CASE("check: the theoretical reference, its fractions, and its absence", "[check]") {
  const auto& triad = spec("hbm_triad");
  const theoretical_figure peak{4.8e12, "2 x 3201 MHz x 6144 bits"};
  const auto at = [&](double fraction) {
    return judge_theoretical(triad, bandwidth_row("triad", fraction * 4.8e12, 20, 0), peak);
  };
  CHECK(at(0.92).verdict == check_verdict::pass);
  CHECK(at(0.801).verdict == check_verdict::pass);
  CHECK(at(0.79).verdict == check_verdict::warn);
  CHECK(at(0.721).verdict == check_verdict::warn);
  CHECK(at(0.70).verdict == check_verdict::fail);
  CHECK_THAT(at(0.92).reason, Catch::Contains("theoretical"));
  const auto none =
      judge_theoretical(triad, bandwidth_row("triad", 4e12), {std::nullopt, "no table"});
  CHECK(none.verdict == check_verdict::not_run);
  CHECK_THAT(none.reason, Catch::Contains("no table"));
  measurement empty;
  CHECK(judge_theoretical(triad, empty, peak).verdict == check_verdict::not_run);
  // PCIe both ways on a Gen5 x16 link (126 GB/s): the least a healthy H100 host carried, 71.4
  // GB/s, passes; the floor is 50%, and 0.9 of it (56.7 GB/s) the line to fail at. A link at half
  // width carries half of a healthy figure both ways and fails.
  const auto& both = spec("pcie_both");
  const theoretical_figure link{126.0e9, "PCIe Gen5 x16, both ways"};
  const auto both_at = [&](double bytes_per_s) {
    return judge_theoretical(both, bandwidth_row("both", bytes_per_s), link).verdict;
  };
  CHECK(both_at(71.4e9) == check_verdict::pass);
  CHECK(both_at(63.2e9) == check_verdict::pass);
  CHECK(both_at(62.8e9) == check_verdict::warn);
  CHECK(both_at(57.0e9) == check_verdict::warn);
  CHECK(both_at(56.4e9) == check_verdict::fail);
  CHECK(both_at(71.4e9 / 2) == check_verdict::fail);
}

namespace {

gpu_state healthy_state() {
  gpu_state s;
  s.link_now = {pcie_link{5, 16}, {}};
  s.link_max = {pcie_link{5, 16}, {}};
  s.gpu_max_link_generation = {5U, {}};
  s.sm_clock_max_mhz = {1980U, {}};
  s.ecc_enabled = {true, {}};
  s.ecc_uncorrected_volatile = {0ULL, {}};
  s.ecc_corrected_volatile = {0ULL, {}};
  s.remapped = {remapped_rows{}, {}};
  s.power_limit_w = {700.0, {}};
  s.power_default_limit_w = {700.0, {}};
  s.persistence = {true, {}};
  s.mig = {false, {}};
  s.temperature_c = {40U, {}};
  s.slowdown_temperature_c = {87U, {}};
  return s;
}

check_verdict verdict_of(const std::vector<check_outcome>& v, std::string_view id) {
  for (const auto& o : v)
    if (o.id == id) return o.verdict;
  FAIL("no outcome " << id);
  return check_verdict::not_run;
}

std::string reason_of(const std::vector<check_outcome>& v, std::string_view id) {
  for (const auto& o : v)
    if (o.id == id) return o.reason;
  return {};
}

} // namespace

TEST_CASE("check: the state rules", "[check]") {
  const auto ok = judge_state(healthy_state());
  for (const auto& o : ok) CHECK(o.verdict == check_verdict::pass);

  auto s = healthy_state();
  s.link_now = {pcie_link{5, 8}, {}}; // half width
  auto v = judge_state(s);
  CHECK(verdict_of(v, "pcie_link") == check_verdict::fail);
  CHECK_THAT(reason_of(v, "pcie_link"), Catch::Contains("Gen5 x8") && Catch::Contains("Gen5 x16"));

  s = healthy_state();
  s.link_now = {pcie_link{4, 16}, {}}; // trained down a generation
  v = judge_state(s);
  CHECK(verdict_of(v, "pcie_link") == check_verdict::fail);
  CHECK_THAT(reason_of(v, "pcie_link"), Catch::Contains("BIOS"));

  s = healthy_state();
  s.link_now = {pcie_link{4, 16}, {}};
  s.link_max = {pcie_link{4, 16}, {}}; // the slot caps a Gen5 GPU at Gen4
  v = judge_state(s);
  CHECK(verdict_of(v, "pcie_link") == check_verdict::warn);

  s = healthy_state();
  s.ecc_uncorrected_volatile = {3ULL, {}};
  CHECK(verdict_of(judge_state(s), "ecc") == check_verdict::fail);
  s = healthy_state();
  s.ecc_enabled = {false, {}};
  CHECK(verdict_of(judge_state(s), "ecc") == check_verdict::warn);

  s = healthy_state();
  s.remapped = {remapped_rows{0, 1, true, false}, {}};
  CHECK(verdict_of(judge_state(s), "remapped_rows") == check_verdict::warn);
  s.remapped = {remapped_rows{0, 1, false, true}, {}};
  CHECK(verdict_of(judge_state(s), "remapped_rows") == check_verdict::fail);

  // The power limit: 0.95 of the default is the line.
  s = healthy_state();
  s.power_limit_w = {666.0, {}};
  CHECK(verdict_of(judge_state(s), "power_limit") == check_verdict::pass);
  s.power_limit_w = {450.0, {}};
  v = judge_state(s);
  CHECK(verdict_of(v, "power_limit") == check_verdict::warn);
  CHECK_THAT(reason_of(v, "power_limit"), Catch::Contains("450 W") && Catch::Contains("700 W"));

  s = healthy_state();
  s.temperature_c = {83U, {}};
  CHECK(verdict_of(judge_state(s), "temperature") == check_verdict::warn);
  s.temperature_c = {87U, {}};
  CHECK(verdict_of(judge_state(s), "temperature") == check_verdict::fail);

  s = healthy_state();
  s.mig = {true, {}};
  CHECK(verdict_of(judge_state(s), "mig_mode") == check_verdict::warn);
  s = healthy_state();
  s.persistence = {false, {}};
  CHECK(verdict_of(judge_state(s), "persistence") == check_verdict::pass);

  // A field NVML does not answer is not run, never passed.
  s = healthy_state();
  s.remapped = {std::nullopt, "not supported"};
  v = judge_state(s);
  CHECK(verdict_of(v, "remapped_rows") == check_verdict::not_run);
  CHECK_THAT(reason_of(v, "remapped_rows"), Catch::Contains("not supported"));

  // NVML missing: one outcome that says the state was not checked.
  gpu_state none;
  none.unavailable = "cannot load libnvidia-ml.so.1";
  v = judge_state(none);
  REQUIRE(v.size() == 1);
  CHECK(v[0].verdict == check_verdict::not_run);
  CHECK_THAT(v[0].reason, Catch::Contains("not checked") && Catch::Contains("libnvidia-ml"));
}

TEST_CASE("check: PCIe bandwidth per generation and width", "[check]") {
  CHECK(*pcie_bytes_per_s({5, 16}) == Approx(63.0e9).epsilon(0.001));
  CHECK(*pcie_bytes_per_s({4, 16}) == Approx(31.5e9).epsilon(0.001));
  CHECK(*pcie_bytes_per_s({3, 8}) == Approx(7.877e9).epsilon(0.001));
  CHECK_FALSE(pcie_bytes_per_s({7, 16}));
  CHECK_FALSE(pcie_bytes_per_s({5, 0}));
}

TEST_CASE("check: the fleet rule names one slow GPU of eight and none of eight healthy",
          "[check]") {
  const auto& triad = spec("hbm_triad");
  std::vector<double> healthy = {4.40e12,  4.41e12,  4.39e12,  4.405e12,
                                 4.398e12, 4.402e12, 4.395e12, 4.41e12};
  for (const auto& o : fleet_outliers(triad, healthy)) CHECK(o.is_null());
  auto one_slow = healthy;
  one_slow[5] = 4.40e12 / 1.05;
  const auto found = fleet_outliers(triad, one_slow);
  for (std::size_t i = 0; i < found.size(); ++i) {
    INFO(i);
    CHECK(found[i].is_null() == (i != 5));
  }
  CHECK(found[5]["peers"] == 7);
  CHECK(found[5]["deficit"].get<double>() == Approx(0.0476).epsilon(0.02));
  // Two GPUs (two ranks): the slower is named when the gap is past the check's limit.
  const auto two = fleet_outliers(triad, {4.40e12, 4.40e12 / 1.05});
  CHECK(two[0].is_null());
  CHECK_FALSE(two[1].is_null());
  CHECK(fleet_outliers(triad, {4.40e12, 4.39e12})[1].is_null());
  CHECK(fleet_outliers(triad, {4.40e12})[0].is_null());
  // A latency: the slower is the larger.
  const auto lat = fleet_outliers(spec("launch_latency"), {5e-6, 5.1e-6, 4.9e-6, 12e-6});
  CHECK_FALSE(lat[3].is_null());
}

TEST_CASE("check: reference files are read strictly and built from runs", "[check]") {
  const json good = {{"schema", "gpubench-reference/1"},
                     {"models",
                      {{{"model", "NVIDIA H200"},
                        {"driver", "580.159.04"},
                        {"runtime", "13.0"},
                        {"date", "2026-12-05"},
                        {"checks",
                         {{"hbm_triad",
                           {{"median", 4.4e12},
                            {"spread", 0.003},
                            {"runs", 10},
                            {"samples", {4.4e12, 4.41e12}}}}}}}}}};
  const auto r = reference_from_json(good, "ref.json");
  REQUIRE(r.find("NVIDIA H200") != nullptr);
  CHECK(r.find("NVIDIA H100") == nullptr);
  CHECK(r.find("NVIDIA H200")->checks.at("hbm_triad").runs == 10);
  // Round trip.
  CHECK(to_json(reference_from_json(to_json(r), "again")) == to_json(r));

  const auto bad = [&](const std::function<void(json&)>& edit, const std::string& key) {
    json j = good;
    edit(j);
    CHECK_THROWS_WITH(reference_from_json(j, "ref.json"), Catch::Contains(key));
  };
  bad([](json& j) { j["schema"] = "gpubench/1"; }, "ref.json.schema");
  bad([](json& j) { j.erase("models"); }, "'models' is missing");
  bad([](json& j) { j["models"][0]["checks"]["hbm_triad"]["median"] = -1; },
      "checks.hbm_triad.median");
  bad([](json& j) { j["models"][0]["checks"]["hbm_triad"]["spread"] = 1.5; },
      "checks.hbm_triad.spread");
  bad([](json& j) { j["models"][0]["checks"]["hbm_triad"]["samples"][1] = "x"; }, "samples[1]");
  bad([](json& j) { j["models"][0]["checks"]["no_such"] = j["models"][0]["checks"]["hbm_triad"]; },
      "'no_such' is not a check");
  bad([](json& j) { j["models"][0]["model"] = "bad\x1b[2Jname"; }, "models[0].model");
  bad([](json& j) { j["models"].push_back(j["models"][0]); }, "listed twice");

  // Built from three runs: the median of medians, the spread between runs (a run's own spread
  // as the floor), the samples of the run nearest the median.
  const auto e = reference_entry_from_runs({{100, 101, 99}, {110, 111, 109}, {105, 105, 105}});
  CHECK(e.median == Approx(105));
  CHECK(e.runs == 3);
  CHECK(e.samples == std::vector<double>{105, 105, 105});
  CHECK(e.spread == Approx(1.4826 * 5 / 105));
  const auto one = reference_entry_from_runs({{100, 102, 98, 100}});
  CHECK(one.runs == 1);
  CHECK(one.spread > 0);

  // A long run is thinned to 200 samples that keep its distribution: here its first 200 (taken
  // before a power cap lowered the clock) are fast and its other 400 slow. The kept samples'
  // median is the run's, and their shares are the run's.
  std::vector<double> capped(600, 680.0);
  std::fill_n(capped.begin(), 200, 760.0);
  const auto thinned = reference_entry_from_runs({capped});
  REQUIRE(thinned.samples.size() == 200);
  CHECK(thinned.median == Approx(680));
  CHECK(summarize(thinned.samples).median == Approx(680));
  CHECK(std::ranges::count(thinned.samples, 760.0) == 67);
  CHECK(std::ranges::is_sorted(thinned.samples));
  // A healthy run like it, judged against that reference, passes: the samples' shift is nil.
  const auto& tensor = spec("tensor_bf16");
  measurement m;
  m.name = "kernel";
  m.work.flops = 1e12;
  for (int i = 0; i < 600; ++i) m.samples.push_back(1e12 / (i % 3 == 0 ? 760e12 : 680e12));
  m.stats = summarize(m.samples);
  reference_entry held = thinned;
  for (double& f : held.samples) f *= 1e12;
  held.median *= 1e12;
  const auto o = judge_measured(tensor, m, held, "t");
  INFO(o.reason);
  CHECK(o.verdict == check_verdict::pass);
}

TEST_CASE("check: outcomes round-trip and malformed ones are named", "[check]") {
  check_outcome o;
  o.id = "hbm_triad";
  o.verdict = check_verdict::warn;
  o.figure = 4.3e12;
  o.unit = "B/s";
  o.reference = 4.4e12;
  o.ratio = 4.3 / 4.4;
  o.reference_kind = "measured";
  o.reference_source = "shipped of 2026-12-05";
  o.reason = "HBM triad ...";
  const auto back = check_outcome_from_json(to_json(o), "x");
  CHECK(to_json(back) == to_json(o));
  json j = to_json(o);
  j["verdict"] = "maybe";
  CHECK_THROWS_WITH(check_outcome_from_json(j, "results[0].derived.check[0]"),
                    Catch::Contains("results[0].derived.check[0].verdict"));
  j = to_json(o);
  j["figure"] = "fast";
  CHECK_THROWS_WITH(check_outcome_from_json(j, "r"), Catch::Contains("r.figure"));
  j = to_json(o);
  j["reason"] = std::string(5000, 'x');
  CHECK_THROWS_WITH(check_outcome_from_json(j, "r"), Catch::Contains("r.reason"));
}

namespace {

/// A check run on `gpus` GPUs of one model: a state point and an hbm point each, triad of GPU i
/// at triad[i]; with `one_gpu`, run i is MPI rank i and every rank ran on GPU 0.
run_report fleet_report(const std::vector<double>& triad, bool one_gpu = false,
                        bool measured = false) {
  run_report rep;
  rep.meta.host.name = "node1";
  rep.meta.started_at = "2026-12-05T10:00:00Z";
  rep.meta.cuda_runtime = "13.0";
  rep.meta.nvidia_driver = "580.159.04";
  const auto& spec = *find_check_spec("hbm_triad");
  const theoretical_figure peak{4.8e12, "2 x 3201 MHz x 6144 bits"};
  const auto ref = reference_of(bandwidth_row("triad", 4.40e12, 50, 0.002, 7), spec, 0.003);
  for (std::size_t i = 0; i < triad.size(); ++i) {
    const int device = one_gpu ? 0 : static_cast<int>(i);
    const int rank = one_gpu ? static_cast<int>(i) : -1;
    device_record d;
    d.info.id = device;
    d.info.name = "NVIDIA H200";
    d.info.uuid = fmt::format("GPU-{}", i);
    d.info.pci_bus_id = fmt::format("0000:{:02x}:00.0", i + 0x10);
    if (!one_gpu || i == 0) rep.devices.push_back(d);
    result state;
    state.benchmark = "check";
    state.device = device;
    state.rank = rank;
    state.params = {{"check", "state"}};
    json outcomes = json::array();
    for (const auto& o : judge_state(healthy_state())) outcomes.push_back(to_json(o));
    state.derived["check"] = outcomes;
    state.derived["state"] = to_json(healthy_state());
    rep.results.push_back(state);
    result hbm;
    hbm.benchmark = "check";
    hbm.device = device;
    hbm.rank = rank;
    hbm.params = {{"check", "hbm"}};
    hbm.measurements.push_back(
        bandwidth_row("triad", triad[i], 30, 0.001, static_cast<unsigned>(3 + i)));
    hbm.derived["check"] =
        json::array({to_json(measured ? judge_measured(spec, hbm.measurements[0], ref, "test")
                                      : judge_theoretical(spec, hbm.measurements[0], peak))});
    rep.results.push_back(hbm);
  }
  return rep;
}

} // namespace

TEST_CASE("check: a fleet's run names its outlier, its verdicts and exit code", "[check]") {
  auto rep = fleet_report({4.40e12, 4.41e12, 4.39e12, 4.40e12 / 1.05});
  finish_checks(rep);
  const auto s = summarize_checks(rep);
  REQUIRE(s.gpus.size() == 4);
  CHECK(s.outliers == 1);
  CHECK(s.gpus[3].outlier);
  CHECK(s.gpus[3].verdict == check_verdict::warn);
  CHECK(s.gpus[0].verdict == check_verdict::pass);
  CHECK(s.passed == 3);
  CHECK(s.warned == 1);
  CHECK(check_exit_code(s, false) == 0);
  CHECK(check_exit_code(s, true) == 1);
  // The suite-wide checks joined each GPU's state point.
  bool has_clock = false;
  for (const auto& o : s.gpus[0].checks) has_clock = has_clock || o.id == "sm_clock";
  CHECK(has_clock);
  std::ostringstream table;
  write_check_table(table, s, 120);
  CHECK_THAT(table.str(), Catch::Contains("node1:3") && Catch::Contains("0000:13:00.0") &&
                              Catch::Contains("1 outliers"));
  for (const auto& line : {table.str()}) CHECK(line.find('\x1b') == std::string::npos);

  // A reference built from the run: one model, the triad's median.
  const auto ref = build_reference(rep);
  REQUIRE(ref.models.size() == 1);
  CHECK(ref.models[0].model == "NVIDIA H200");
  CHECK(ref.models[0].checks.at("hbm_triad").runs == 4);
  CHECK(ref.models[0].date == "2026-12-05");
}

TEST_CASE("check: the fleet line names the slowest GPU, and only among several", "[check]") {
  const auto fleet_line = [](const std::vector<double>& triad) {
    auto rep = fleet_report(triad, false, true);
    finish_checks(rep);
    std::ostringstream table;
    write_check_table(table, summarize_checks(rep), 200);
    const auto text = table.str();
    return text.substr(text.find("Fleet:"));
  };
  // Two of three below the reference: the lower ratio is named.
  CHECK_THAT(fleet_line({4.40e12, 4.40e12 / 1.01, 4.40e12 / 1.02}),
             Catch::Contains("; slowest: node1 GPU 2 (0000:12:00.0)"));
  // Every GPU at or above its reference: nobody is slowest.
  CHECK_THAT(fleet_line({4.40e12 * 1.01, 4.40e12 * 1.02}), !Catch::Contains("slowest"));
  // One GPU below its reference, alone: no others to be slower than.
  CHECK_THAT(fleet_line({4.40e12 / 1.02}), !Catch::Contains("slowest"));
}

TEST_CASE("check: JUnit and Prometheus text escape what they quote", "[check]") {
  auto rep = fleet_report({4.40e12, 4.40e12 / 1.2});
  rep.meta.host.name = "node\"<1>&";
  finish_checks(rep);
  const auto s = summarize_checks(rep);
  std::ostringstream junit;
  write_check_junit(junit, s, false);
  CHECK_THAT(junit.str(), Catch::Contains("node&quot;&lt;1&gt;&amp;"));
  CHECK(junit.str().find("node\"<1>") == std::string::npos);
  std::ostringstream prom;
  write_check_prometheus(prom, s);
  CHECK_THAT(prom.str(), Catch::Contains("node=\"node\\\"<1>&\""));
  CHECK_THAT(prom.str(), Catch::Contains("# TYPE gpubench_check_verdict gauge"));
}

TEST_CASE("check: ranks that shared one GPU are told apart and the slowed one is named",
          "[check]") {
  auto rep = fleet_report({4.40e12, 4.40e12 / 1.05}, true);
  finish_checks(rep);
  const auto s = summarize_checks(rep);
  REQUIRE(s.gpus.size() == 2);
  CHECK(s.gpus[0].shared);
  CHECK(s.gpus[1].rank == 1);
  CHECK_FALSE(s.gpus[0].outlier);
  CHECK(s.gpus[1].outlier);
  CHECK(gpu_name(s.gpus[1]) == "node1 GPU 0 rank 1 (0000:10:00.0)");
  bool named = false;
  for (const auto& o : s.gpus[1].checks)
    named = named ||
            (o.id == "hbm_triad" &&
             o.reason.find("node1 GPU 0 rank 1 (0000:10:00.0) is an outlier") != std::string::npos);
  CHECK(named);
  std::ostringstream table;
  write_check_table(table, s, 120);
  CHECK_THAT(table.str(), Catch::Contains("node1:0/r0") && Catch::Contains("node1:0/r1"));
  // One Prometheus series per rank: the rank label keeps them apart.
  std::ostringstream prom;
  write_check_prometheus(prom, s);
  CHECK_THAT(prom.str(), Catch::Contains("rank=\"0\"") && Catch::Contains("rank=\"1\""));
  // One GPU alone (rank -1) is named without a rank.
  const auto alone = summarize_checks(fleet_report({4.40e12}));
  CHECK_FALSE(alone.gpus[0].shared);
  CHECK(gpu_name(alone.gpus[0]) == "node1 GPU 0 (0000:10:00.0)");
}

TEST_CASE("check: the shipped references load, each model with every measured check", "[check]") {
  const auto& shipped = shipped_references();
  REQUIRE_FALSE(shipped.models.empty());
  bool h100 = false;
  for (const auto& m : shipped.models) {
    INFO(m.model);
    h100 = h100 || m.model == "NVIDIA H100 80GB HBM3";
    CHECK_FALSE(m.driver.empty());
    for (const auto& spec : check_specs()) {
      if (spec.point == "state") continue;
      REQUIRE(m.checks.contains(std::string(spec.id)));
      const auto& e = m.checks.at(std::string(spec.id));
      CHECK(e.runs >= 3);
      CHECK(e.median > 0);
    }
  }
  CHECK(h100);
}

TEST_CASE("check: a point judged from its rows alone, as check --from judges a saved run",
          "[check]") {
  // An FP32 roof of 60 TFLOP/s on a GPU with no measured reference (no shipped model of this
  // name): held to 256 FLOP/clock/SM x 132 SMs x the highest SM clock, when it is known.
  cuda::device_info info;
  info.name = "NVIDIA Example GPU";
  info.cc_major = 9;
  info.cc_minor = 0;
  info.sms = 132;
  result r;
  r.benchmark = "check";
  measurement m;
  m.name = "kernel";
  m.work.flops = 1e12;
  for (int i = 0; i < 20; ++i) m.samples.push_back(1e12 / 60e12);
  m.stats = summarize(m.samples);
  r.measurements.push_back(m);
  const auto with_clock = judge_point("fp32", r, info, 1980.0, {});
  REQUIRE(with_clock.size() == 1);
  CHECK(with_clock[0].id == "fp32_fma");
  CHECK(with_clock[0].reference_kind == "theoretical");
  CHECK(with_clock[0].reference.value() == Approx(256.0 * 132 * 1980e6));
  CHECK(with_clock[0].verdict == check_verdict::pass); // 89.7% of the peak, passes at 80%
  const auto without = judge_point("fp32", r, info, std::nullopt, {});
  CHECK(without[0].verdict == check_verdict::not_run);
  CHECK_THAT(without[0].reason, Catch::Contains("highest SM clock is not known"));
  // A saved file's PCIe link that is no link: not a crash, no theoretical figure.
  result p;
  p.benchmark = "check";
  p.measurements.push_back(bandwidth_row("h2d", 50e9));
  p.derived["pcie_link_max_generation"] = "five";
  p.derived["pcie_link_max_width"] = -16;
  const auto link = judge_point("pcie", p, info, 1980.0, {});
  CHECK(verdict_of(link, "pcie_h2d") == check_verdict::not_run);
  CHECK_THAT(reason_of(link, "pcie_h2d"), Catch::Contains("NVML did not give the PCIe link"));
  p.derived["pcie_link_max_generation"] = 5;
  p.derived["pcie_link_max_width"] = 16;
  const auto known = judge_point("pcie", p, info, 1980.0, {});
  INFO(reason_of(known, "pcie_h2d"));
  CHECK(verdict_of(known, "pcie_h2d") == check_verdict::pass);
}
