// Specification of compare (docs/compare.md): the rank test, the verdicts, matching and the gate.
#include "gpubench/core/errors.hpp"
#include "gpubench/gate/compare.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <random>
#include <sstream>

using Catch::Matchers::Contains;
using gpubench::verdict;

namespace {

/// A fresh seed per run, shown by INFO when a check fails so that the failure can be replayed.
using gpubench::test::fresh_seed;

/// `n` timings around `center` seconds with relative gaussian noise `rel`.
std::vector<double> timings(std::mt19937_64& rng, std::size_t n, double center, double rel) {
  std::normal_distribution<double> noise(0.0, rel);
  std::vector<double> v(n);
  for (auto& x : v) x = center * (1.0 + noise(rng));
  return v;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (auto& x : v) x *= factor;
  return v;
}

gpubench::measurement measured(const std::string& name, std::vector<double> samples) {
  gpubench::measurement m;
  m.name = name;
  m.samples = std::move(samples);
  return m;
}

gpubench::device_record gpu(int id, const std::string& name) {
  gpubench::device_record d;
  d.info.id = id;
  d.info.name = name;
  return d;
}

gpubench::result vecadd_result(std::int64_t n, int device, std::vector<double> kernel,
                               std::vector<double> h2d) {
  gpubench::result r;
  r.benchmark = "vecadd";
  r.device = device;
  r.params = {{"n", n}, {"dtype", "f32"}};
  r.measurements.push_back(measured("kernel", std::move(kernel)));
  r.measurements.push_back(measured("h2d", std::move(h2d)));
  return r;
}

} // namespace

TEST_CASE("Mann-Whitney U matches hand-computed values", "[compare]") {
  SECTION("fully separated samples") {
    const std::vector<double> a{1, 2, 3};
    const std::vector<double> b{4, 5, 6};
    const auto t = gpubench::mann_whitney_u(a, b);
    CHECK(t.u == 0.0);
    // z = -(4.5 - 0.5) / sqrt(9/12 * 7), p = erfc(|z| / sqrt 2)
    CHECK(t.z == Approx(-1.7457431218879391));
    CHECK(t.p_value == Approx(0.0808555983700523));
    const auto reversed = gpubench::mann_whitney_u(b, a);
    CHECK(reversed.u == 9.0);
    CHECK(reversed.z == Approx(1.7457431218879391));
    CHECK(reversed.p_value == Approx(t.p_value));
  }
  SECTION("ties share their mean rank and shrink the variance") {
    const std::vector<double> a{1, 2, 2};
    const std::vector<double> b{2, 3, 3};
    // ranks 1 | 3 3 3 | 5.5 5.5; U_a = 7 - 6 = 1; var = 9/12 * (7 - 30/30) = 4.5
    const auto t = gpubench::mann_whitney_u(a, b);
    CHECK(t.u == 1.0);
    CHECK(t.z == Approx(-3.0 / std::sqrt(4.5)));
    CHECK(t.p_value == Approx(0.15729920705028513)); // erfc(1)
  }
  SECTION("all values tied or a side empty: no evidence") {
    const std::vector<double> a{2, 2, 2};
    const std::vector<double> b{2, 2};
    CHECK(gpubench::mann_whitney_u(a, b).p_value == 1.0);
    CHECK(gpubench::mann_whitney_u(a, {}).p_value == 1.0);
  }
}

TEST_CASE("verdicts on synthetic samples, one run a side", "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  // 5% threshold, same within 2.5%, 90% intervals; one run a side adds 10% run noise to the
  // limit of slower/faster (between-run noise unknown).
  const gpubench::compare_options opts;
  const auto base = timings(rng, 30, 1e-3, 0.01);

  SECTION("every sample 20% slower: slower, a regression") {
    const auto v = gpubench::judge(base, scaled(base, 1.2), opts);
    CHECK(v.outcome == verdict::slower);
    CHECK(v.change == Approx(0.2));
    CHECK(v.lo > 0.15);
    CHECK(v.p_value < 1e-6);
    CHECK_FALSE(v.between_runs);
  }
  SECTION("every sample 20% faster: faster") {
    const auto v = gpubench::judge(base, scaled(base, 0.8), opts);
    CHECK(v.outcome == verdict::faster);
    CHECK(v.change == Approx(-0.2));
  }
  SECTION("12% slower in one run a side: inconclusive, not a regression") {
    const auto v = gpubench::judge(base, scaled(base, 1.12), opts);
    CHECK(v.outcome == verdict::inconclusive);
    CHECK_THAT(v.note, Contains("between-run noise unknown"));
  }
  SECTION("a fresh draw from the same distribution: never same with run noise unknown") {
    const auto fresh = timings(rng, 30, 1e-3, 0.01);
    const auto v = gpubench::judge(base, fresh, opts);
    CHECK(v.outcome == verdict::inconclusive);
    CHECK_THAT(v.note, Contains("cannot be shown"));
    CHECK(std::abs(v.change) < 0.025);
    // Told that runs do not move (--run-noise 0), the within-run interval decides.
    auto trusting = opts;
    trusting.run_noise = 0;
    CHECK(gpubench::judge(base, fresh, trusting).outcome == verdict::same);
  }
  SECTION("identical files: p = 1, but one run a side is still not evidence of same") {
    const auto v = gpubench::judge(base, base, opts);
    CHECK(v.outcome == verdict::inconclusive);
    CHECK(v.change == Approx(0.0).margin(1e-12));
    CHECK(v.p_value == Approx(1.0));
  }
  SECTION("a 5% slowdown that one run shows as 1%: never same") {
    // Between-run noise can hide most of a real 5% slowdown in one pair of runs; the gate
    // must not call that pair "same" (5 of 240 one-run pairs did before).
    const auto v = gpubench::judge(base, scaled(base, 1.01), opts);
    CHECK(v.outcome == verdict::inconclusive);
  }
  SECTION("a clear 4% change is neither same (margin 2.5%) nor slower: inconclusive") {
    // Judged on the within-run interval alone (run noise 0), so only the margin and the threshold
    // decide. The interval's half-width is about 0.4% here (30 samples, 1% spread): 4% keeps its
    // lower end past the margin by more than three half-widths whatever the seed.
    auto within = opts;
    within.run_noise = 0;
    const auto v = gpubench::judge(base, scaled(base, 1.04), within);
    CHECK(v.lo > 0.025);
    CHECK(v.hi < 0.05);
    CHECK(v.outcome == verdict::inconclusive);
  }
  SECTION("one sample on either side: inconclusive, whatever the change") {
    const std::vector<double> one{2e-3};
    const auto v = gpubench::judge(base, one, opts);
    CHECK(v.outcome == verdict::inconclusive);
    CHECK(v.change == Approx(1.0).margin(0.1));
    CHECK_THAT(v.note, Contains("fewer than 2 samples"));
    CHECK(gpubench::judge(one, one, opts).outcome == verdict::inconclusive);
  }
  SECTION("beyond the threshold but too noisy to tell: inconclusive") {
    const std::vector<double> b{1.0, 1.5, 0.7};
    const std::vector<double> n{1.4, 0.9, 1.2};
    const auto v = gpubench::judge(b, n, opts);
    CHECK(v.p_value > 0.05);
    CHECK(v.outcome == verdict::inconclusive);
  }
}

TEST_CASE("several runs a side: judged on the spread between runs", "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const gpubench::compare_options opts;
  std::vector<std::vector<double>> base;
  std::vector<std::vector<double>> slow;
  for (int r = 0; r < 5; ++r) {
    // Each run shifted as a whole (the run-to-run noise one process cannot show).
    const double run = 1.0 + 0.01 * (r - 2);
    base.push_back(scaled(timings(rng, 30, 1e-3, 0.002), run));
    slow.push_back(scaled(timings(rng, 30, 1e-3, 0.002), 1.12 * run));
  }
  const auto v = gpubench::judge_runs(base, slow, opts, opts.threshold);
  CHECK(v.between_runs);
  CHECK(v.base_runs == 5);
  CHECK(v.outcome == verdict::slower); // 12% beyond 5% with 5 runs a side: no run-noise allowance
  CHECK(v.lo > 0.05);
  CHECK(v.change == Approx(0.12).margin(0.01));
  const auto same = gpubench::judge_runs(base, base, opts, opts.threshold);
  CHECK(same.outcome == verdict::same);
}

TEST_CASE("compare matches results by benchmark, parameters and device", "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const auto k = timings(rng, 20, 1e-4, 0.01);
  const auto h = timings(rng, 20, 1e-3, 0.01);

  gpubench::run_report base;
  base.devices = {gpu(0, "NVIDIA H200")};
  base.results = {vecadd_result(1000, 0, k, h), vecadd_result(2000, 0, k, h)};
  gpubench::run_report candidate;
  candidate.devices = {gpu(0, "NVIDIA H200")};
  // n=2000 kernel slowed by 20%, n=1000 unchanged, n=4000 only in NEW; order differs.
  candidate.results = {vecadd_result(4000, 0, k, h), vecadd_result(2000, 0, scaled(k, 1.2), h),
                       vecadd_result(1000, 0, k, h)};

  const auto c = gpubench::compare_reports(base, candidate, {});
  REQUIRE(c.rows.size() == 4);
  CHECK(c.rows[0].params == nlohmann::json({{"n", 1000}, {"dtype", "f32"}}));
  // Unchanged rows, one run a side: not "same" (between-run noise unknown), never a regression.
  CHECK(c.rows[0].result.outcome == verdict::inconclusive);
  CHECK(c.rows[1].result.outcome == verdict::inconclusive);
  CHECK(c.rows[2].params == nlohmann::json({{"n", 2000}, {"dtype", "f32"}}));
  CHECK(c.rows[2].measurement == "kernel");
  CHECK(c.rows[2].device == "NVIDIA H200");
  CHECK(c.rows[2].result.outcome == verdict::slower);
  CHECK(c.rows[2].regression());
  CHECK(c.rows[3].result.outcome == verdict::inconclusive);
  CHECK(c.only_in_base.empty());
  REQUIRE(c.only_in_new.size() == 1);
  CHECK_THAT(c.only_in_new[0], Contains("vecadd [NVIDIA H200]") && Contains("n=4000"));
  CHECK(c.regressions() == 1);
  CHECK(gpubench::exit_code_for(c) == 1);

  std::ostringstream table;
  gpubench::write_comparison(table, c, gpubench::output_format::table);
  CHECK_THAT(table.str(), Contains("REGRESSION") && Contains("+20.0%") &&
                              Contains("Regressions:") &&
                              Contains("vecadd kernel [dtype=f32 n=2000]") &&
                              Contains("Only in NEW:") && Contains("1 slower"));
  std::ostringstream md;
  gpubench::write_comparison(md, c, gpubench::output_format::md);
  CHECK_THAT(md.str(), Contains("| benchmark | params |") && Contains("**REGRESSION**"));
  const auto j = gpubench::to_json(c);
  CHECK(j.at("summary").at("regressions") == 1);
  CHECK(j.at("rows").at(2).at("verdict") == "slower");
  CHECK(j.at("rows").at(2).at("regression") == true);
}

TEST_CASE("a speedup never fails the gate; identical reports are same once run noise is given",
          "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const auto k = timings(rng, 15, 1e-4, 0.02);
  const auto h = timings(rng, 15, 1e-3, 0.02);
  gpubench::run_report base;
  base.devices = {gpu(0, "NVIDIA H200")};
  base.results = {vecadd_result(1000, 0, k, h)};

  const auto one_run = gpubench::compare_reports(base, base, {});
  REQUIRE(one_run.rows.size() == 2);
  for (const auto& row : one_run.rows) CHECK(row.result.outcome == verdict::inconclusive);
  CHECK(gpubench::exit_code_for(one_run) == 0);
  gpubench::compare_options no_run_noise;
  no_run_noise.run_noise = 0;
  const auto same = gpubench::compare_reports(base, base, no_run_noise);
  for (const auto& row : same.rows) CHECK(row.result.outcome == verdict::same);
  CHECK(gpubench::exit_code_for(same) == 0);

  auto faster = base;
  faster.results[0].measurements[0].samples = scaled(k, 0.5);
  const auto c = gpubench::compare_reports(base, faster, {});
  CHECK(c.rows[0].result.outcome == verdict::faster);
  CHECK(gpubench::exit_code_for(c) == 0);
}

TEST_CASE("results from different GPU models are refused unless allowed", "[compare]") {
  const std::vector<double> k{1e-4, 1.1e-4, 0.9e-4};
  gpubench::run_report base;
  base.devices = {gpu(0, "NVIDIA A100-SXM4-80GB")};
  base.results = {vecadd_result(1000, 0, k, k)};
  gpubench::run_report candidate;
  candidate.devices = {gpu(0, "NVIDIA H200")};
  candidate.results = {vecadd_result(1000, 0, k, k)};

  CHECK_THROWS_AS(gpubench::compare_reports(base, candidate, {}), gpubench::usage_error);
  CHECK_THROWS_WITH(gpubench::compare_reports(base, candidate, {}),
                    Contains("NVIDIA A100-SXM4-80GB") && Contains("NVIDIA H200") &&
                        Contains("--allow-device-mismatch"));
  gpubench::compare_options allowed;
  allowed.allow_device_mismatch = true;
  const auto c = gpubench::compare_reports(base, candidate, allowed);
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].device == "NVIDIA A100-SXM4-80GB / NVIDIA H200");
}

TEST_CASE("skipped points and missing measurements are listed, not compared", "[compare]") {
  const std::vector<double> k{1e-4, 1.1e-4, 0.9e-4};
  gpubench::run_report base;
  base.results = {vecadd_result(1000, -1, k, k), vecadd_result(2000, -1, k, k)};
  auto candidate = base;
  candidate.results[0].measurements.pop_back(); // h2d gone
  candidate.results[1].status = gpubench::result_status::skipped;
  candidate.results[1].reason = "out of device memory";
  candidate.results[1].measurements.clear();

  const auto c = gpubench::compare_reports(base, candidate, {});
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].device == "cpu");
  REQUIRE(c.only_in_base.size() == 1);
  CHECK_THAT(c.only_in_base[0], Contains("n=1000: h2d"));
  REQUIRE(c.notes.size() == 1);
  CHECK_THAT(c.notes[0], Contains("n=2000") && Contains("skipped: out of device memory"));
}

TEST_CASE("merging reports renumbers devices that clash", "[compare]") {
  const std::vector<double> k{1e-4, 1.1e-4};
  gpubench::run_report a;
  a.devices = {gpu(0, "NVIDIA H200")};
  a.results = {vecadd_result(1000, 0, k, k)};
  gpubench::run_report b;
  b.devices = {gpu(0, "NVIDIA A100-SXM4-80GB")};
  b.results = {vecadd_result(1000, 0, k, k), vecadd_result(1000, -1, k, k)};
  b.meta.incomplete = true;
  b.meta.incomplete_reason = "interrupted";

  const std::vector<gpubench::run_report> both{a, a, b};
  const auto m = gpubench::merge_reports(both);
  REQUIRE(m.devices.size() == 2);
  CHECK(m.devices[1].info.name == "NVIDIA A100-SXM4-80GB");
  CHECK(m.devices[1].info.id == 1);
  REQUIRE(m.results.size() == 4);
  CHECK(m.results[0].device == 0);
  CHECK(m.results[1].device == 0);
  CHECK(m.results[2].device == 1);
  CHECK(m.results[3].device == -1);
  CHECK(m.meta.incomplete);
  CHECK(m.meta.incomplete_reason == "interrupted");
}

TEST_CASE("thresholds are percentages", "[compare]") {
  CHECK(gpubench::parse_percentage("5%", "--threshold") == Approx(0.05));
  CHECK(gpubench::parse_percentage("2.5", "--threshold") == Approx(0.025));
  CHECK(gpubench::parse_percentage("0", "--threshold") == 0.0);
  CHECK_THROWS_WITH(gpubench::parse_percentage("five", "--threshold"),
                    Contains("--threshold: 'five' is not a percentage"));
  CHECK_THROWS_WITH(gpubench::parse_percentage("-1%", "--threshold"), Contains("'-1%'"));
  CHECK_THROWS_WITH(gpubench::parse_percentage("", "--threshold"), Contains("''"));
}

TEST_CASE("--clock gpu judges only GPU-clock measurements", "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  gpubench::run_report base;
  base.devices = {gpu(0, "NVIDIA H200")};
  base.results = {
      vecadd_result(1000, 0, timings(rng, 15, 1e-4, 0.01), timings(rng, 15, 1e-3, 0.01))};
  base.results[0].measurements[1].clock = gpubench::clock_kind::host; // stands in for the CPU
  auto slower_host = base;
  slower_host.results[0].measurements[1].samples =
      scaled(base.results[0].measurements[1].samples, 1.2);

  // Both clocks judged; the host row moved 20% but is not gated by default ...
  const auto all = gpubench::compare_reports(base, slower_host, {});
  CHECK(all.rows.size() == 2);
  CHECK(gpubench::exit_code_for(all) == 0);
  // ... and fails once host-clock rows are gated at a threshold it passes (5% + 10% run noise).
  gpubench::compare_options host_gated;
  host_gated.host_threshold = 0.05;
  CHECK(gpubench::exit_code_for(gpubench::compare_reports(base, slower_host, host_gated)) == 1);

  gpubench::compare_options gpu_only;
  gpu_only.clock = "gpu";
  const auto gated = gpubench::compare_reports(base, slower_host, gpu_only);
  REQUIRE(gated.rows.size() == 1);
  CHECK(gated.rows[0].measurement == "kernel");
  CHECK(gpubench::exit_code_for(gated) == 0);
}

namespace {

/// One run of a GPU point with the three classes of rows: `kernel` (GPU clock), `stage`
/// (GPU clock, host-bound) and `cpu_reference` (host clock), each around its own time; `factor`
/// scales one of them by name.
gpubench::run_report three_class_run(std::mt19937_64& rng, double run_shift,
                                     const std::string& slowed = "", double factor = 1.0) {
  const auto times = [&](const std::string& name, double center) {
    const double f = run_shift * (name == slowed ? factor : 1.0);
    return measured(name, timings(rng, 30, center * f, 0.003));
  };
  gpubench::result r;
  r.benchmark = "vecadd";
  r.device = 0;
  r.params = {{"n", 4000000}, {"dtype", "f32"}};
  r.measurements.push_back(times("kernel", 15e-6));
  r.measurements.push_back(times("stage", 70e-6));
  r.measurements.back().host_bound = true;
  r.measurements.push_back(times("cpu_reference", 300e-6));
  r.measurements.back().clock = gpubench::clock_kind::host;
  gpubench::run_report report;
  report.devices = {gpu(0, "NVIDIA H200")};
  report.results = {r};
  return report;
}

/// `k` runs, each moved as a whole by a gaussian draw of `run_noise` (between-process noise).
std::vector<gpubench::result_file> runs_of(std::mt19937_64& rng, std::size_t k, double run_noise,
                                           const std::string& slowed = "", double factor = 1.0) {
  std::normal_distribution<double> shift(0.0, run_noise);
  std::vector<gpubench::result_file> files;
  for (std::size_t i = 0; i < k; ++i)
    files.push_back(gpubench::as_result_file(three_class_run(rng, 1.0 + shift(rng), slowed, factor),
                                             "run-" + std::to_string(i)));
  return files;
}

// `name` a const char*: a std::string temporary would make GCC 13 warn of a dangling reference.
const gpubench::comparison_row& row_named(const gpubench::comparison& c, const char* name) {
  for (const auto& r : c.rows)
    if (r.measurement == name) return r;
  throw std::runtime_error(std::string("no row ") + name);
}

} // namespace

TEST_CASE("by default only GPU-clock rows that are not host-bound are gated", "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const auto base = three_class_run(rng, 1.0);
  auto all_slower = base;
  for (auto& m : all_slower.results[0].measurements) m.samples = scaled(m.samples, 1.5);

  SECTION("each class: judged and shown, only the GPU row gated") {
    const auto c = gpubench::compare_reports(base, all_slower, {});
    REQUIRE(c.rows.size() == 3);
    const auto& kernel = row_named(c, "kernel");
    const auto& stage = row_named(c, "stage");
    const auto& cpu = row_named(c, "cpu_reference");
    CHECK(kernel.kind == gpubench::gate_class::gpu);
    CHECK(stage.kind == gpubench::gate_class::host_bound);
    CHECK(cpu.kind == gpubench::gate_class::host);
    CHECK(cpu.clock == gpubench::clock_kind::host);
    for (const auto* r : {&kernel, &stage, &cpu}) {
      CHECK(r->result.outcome == verdict::slower); // 50% slower, all three: judged alike
      CHECK(r->result.change == Approx(0.5).margin(0.01));
    }
    CHECK(kernel.gated);
    CHECK(kernel.regression());
    CHECK_FALSE(stage.gated);
    CHECK_FALSE(stage.regression());
    CHECK_FALSE(cpu.gated);
    CHECK_FALSE(cpu.regression());
    CHECK(c.regressions() == 1);
    CHECK(c.gated_rows() == 1);
    CHECK_THAT(gpubench::gate_reason(cpu),
               Contains("host clock: not gated") && Contains("--gate host gates it at 25.0%"));
    CHECK_THAT(gpubench::gate_reason(stage),
               Contains("host-bound: not gated") && Contains("--gate host-bound"));
    CHECK(gpubench::gate_reason(kernel) == "GPU clock: gated at 5.0%");

    const auto j = gpubench::to_json(c);
    CHECK(j.at("summary").at("gated") == 1);
    CHECK(j.at("summary").at("not_gated").at("host") == 1);
    CHECK(j.at("summary").at("not_gated").at("host-bound") == 1);
    CHECK(j.at("host_threshold").is_null());
    for (const auto& r : j.at("rows")) {
      const bool gpu_row = r.at("measurement") == "kernel";
      CHECK(r.at("gated") == gpu_row);
      CHECK(r.at("regression") == gpu_row);
      CHECK(r.at("gate_reason").get<std::string>().find(gpu_row ? "gated at" : "not gated") !=
            std::string::npos);
    }
    CHECK(j.at("rows").at(2).at("gate_class") == "host");
    CHECK(j.at("rows").at(2).at("clock") == "host");
    CHECK(j.at("rows").at(1).at("gate_class") == "host-bound");

    std::ostringstream table;
    gpubench::write_comparison(table, c, gpubench::output_format::table);
    CHECK_THAT(table.str(), Contains("cpu_reference [host]") && Contains("stage [host-bound]") &&
                                Contains("slower (not gated)") && Contains("REGRESSION") &&
                                Contains("Gated: 1 GPU-clock row at 5.0%") &&
                                Contains("Not gated: 1 host-clock row (host timings move between "
                                         "processes; --gate host gates them at 25.0%)") &&
                                Contains("Not gated: 1 host-bound row"));
    std::ostringstream md;
    gpubench::write_comparison(md, c, gpubench::output_format::md);
    CHECK_THAT(md.str(), Contains("slower (not gated)") && Contains("cpu_reference [host]") &&
                             Contains("Not gated: 1 host-clock row"));
  }
  SECTION("only the host-clock and host-bound rows slower: exit 0") {
    auto host_slower = base;
    for (auto& m : host_slower.results[0].measurements)
      if (m.name != "kernel") m.samples = scaled(m.samples, 1.5);
    const auto c = gpubench::compare_reports(base, host_slower, {});
    CHECK(c.regressions() == 0);
    CHECK(gpubench::exit_code_for(c) == 0);

    SECTION("asked for, each class is gated at its own threshold") {
      gpubench::compare_options asked;
      asked.host_threshold = gpubench::default_host_threshold;
      const auto host = gpubench::compare_reports(base, host_slower, asked);
      CHECK(row_named(host, "cpu_reference").gated);
      CHECK(row_named(host, "cpu_reference").threshold == Approx(0.25));
      CHECK(row_named(host, "cpu_reference").regression()); // 50% beyond 25% + 10% run noise
      CHECK_FALSE(row_named(host, "stage").gated);
      CHECK(gpubench::exit_code_for(host) == 1);
      asked.host_threshold.reset();
      asked.host_bound_threshold = 0.6; // beyond a 50% slowdown: gated, but not failed
      const auto hb = gpubench::compare_reports(base, host_slower, asked);
      CHECK(row_named(hb, "stage").gated);
      CHECK_FALSE(row_named(hb, "stage").regression());
      CHECK(gpubench::exit_code_for(hb) == 0);
      asked.host_bound_threshold = 0.3;
      CHECK(gpubench::exit_code_for(gpubench::compare_reports(base, host_slower, asked)) == 1);
    }
  }
  SECTION("a comparison with no gated row says that it cannot fail") {
    gpubench::compare_options host_clock;
    host_clock.clock = "host";
    const auto c = gpubench::compare_reports(base, all_slower, host_clock);
    REQUIRE(c.rows.size() == 1);
    CHECK(gpubench::exit_code_for(c) == 0);
    std::ostringstream table;
    gpubench::write_comparison(table, c, gpubench::output_format::table);
    CHECK_THAT(table.str(), Contains("Gated: no row, so nothing compared here can fail the gate"));
  }
}

TEST_CASE("at the defaults a GPU slowdown is still caught: 20% with one run a side, 10% with "
          "five",
          "[compare]") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const gpubench::compare_options defaults;
  SECTION("20%, one run a side") {
    const auto base = runs_of(rng, 1, 0.0);
    const auto slow = runs_of(rng, 1, 0.0, "kernel", 1.2);
    const auto c = gpubench::compare_runs(base, slow, defaults);
    const auto& kernel = row_named(c, "kernel");
    CHECK_FALSE(kernel.result.between_runs);
    CHECK(kernel.result.lo > 0.15); // beyond 5% + 10% run noise
    CHECK(kernel.regression());
    CHECK(c.regressions() == 1);
    CHECK(gpubench::exit_code_for(c) == 1);
  }
  SECTION("10%, five runs a side with 1% between-run noise") {
    const auto base = runs_of(rng, 5, 0.01);
    const auto slow = runs_of(rng, 5, 0.01, "kernel", 1.1);
    const auto c = gpubench::compare_runs(base, slow, defaults);
    const auto& kernel = row_named(c, "kernel");
    CHECK(kernel.result.between_runs);
    CHECK(kernel.result.lo > 0.05);
    CHECK(kernel.regression());
    CHECK(c.regressions() == 1);
    CHECK(gpubench::exit_code_for(c) == 1);
  }
  SECTION("the same build, five runs a side: no regression") {
    const auto c = gpubench::compare_runs(runs_of(rng, 5, 0.01), runs_of(rng, 5, 0.01), defaults);
    CHECK(c.regressions() == 0);
    CHECK(gpubench::exit_code_for(c) == 0);
  }
}

TEST_CASE("same code only when every file of both sides records one and the same source hash",
          "[compare]") {
  const std::string h1(64, '1');
  const std::string h2(64, '2');
  gpubench::side_environment base;
  gpubench::side_environment fresh;
  base.source_hashes = {h1};
  fresh.source_hashes = {h1};
  CHECK(gpubench::same_code(base, fresh) == std::optional<bool>(true));
  CHECK(gpubench::code_line(base, fresh) == "Code: same (sources sha256 111111111111)");
  fresh.source_hashes = {h2};
  CHECK(gpubench::same_code(base, fresh) == std::optional<bool>(false));
  CHECK_THAT(gpubench::code_line(base, fresh),
             Catch::StartsWith("Code: DIFFERS") &&
                 Catch::Contains("BASE 111111111111, NEW 222222222222"));
  fresh.source_hashes = {h1, h2}; // NEW's runs come from two builds
  CHECK(gpubench::same_code(base, fresh) == std::optional<bool>(false));
  fresh.source_hashes = {""}; // written before the hash was recorded
  CHECK_FALSE(gpubench::same_code(base, fresh).has_value());
  CHECK_THAT(gpubench::code_line(base, fresh),
             Catch::Contains("not known to be the same") && Catch::Contains("NEW not recorded"));
  fresh.source_hashes = {"", h2}; // a difference is known whatever else is missing
  CHECK(gpubench::same_code(base, fresh) == std::optional<bool>(false));
}
