// A new benchmark is its declaration and one line in the registry's list
// (docs/adding-a-benchmark.md): a tiny CPU-only benchmark, declared here in the shape of the
// shipped ones and added to the shipped list with one line, is listed, parsed from a run file,
// planned, run by the same runner and written by the same writers, with nothing else changed. It
// stays out of the binary.
#include "gpubench/registry/registry.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/measure.hpp"
#include "gpubench/engine/plan_listing.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/engine/run_file.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/report/report.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <numeric>
#include <sstream>
#include <vector>

using namespace gpubench;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

/// The sum of 1..n two ways: one accumulator, and pairs of halves (the order a parallel reduction
/// adds in). Integers, so both must agree exactly; the check says so in result::verify.
std::uint64_t serial_sum(const std::vector<std::uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

std::uint64_t pairwise_sum(const std::uint64_t* v, std::size_t n) {
  if (n <= 8) return std::accumulate(v, v + n, std::uint64_t{0});
  return pairwise_sum(v, n / 2) + pairwise_sum(v + n / 2, n - n / 2);
}

result run_sum_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const auto n = point.get<std::size_t>("n");
  std::vector<std::uint64_t> v(n);
  std::iota(v.begin(), v.end(), std::uint64_t{1});
  const std::uint64_t want = n * (n + 1) / 2;

  result r;
  r.params = point.values();
  const work_counts work{8.0 * static_cast<double>(n), static_cast<double>(n), "integers"};
  std::uint64_t got_serial = 0;
  std::uint64_t got_pairwise = 0;
  r.measurements.push_back(
      measure_host("serial", opts.measure, work, [&] { got_serial = serial_sum(v); }));
  r.measurements.push_back(measure_host("pairwise", opts.measure, work,
                                        [&] { got_pairwise = pairwise_sum(v.data(), n); }));
  if (opts.verify) {
    verification check;
    check.performed = true;
    check.method = "exact";
    check.checked = 2;
    check.mismatches = (got_serial != want ? 1U : 0U) + (got_pairwise != want ? 1U : 0U);
    check.passed = check.mismatches == 0;
    r.verify.merge(check, "sums");
  }
  return r;
}

benchmark make_sum_benchmark() {
  benchmark b("sum", "Sums 1..n on the CPU, serially and pairwise (a test benchmark)",
              "  gpubench sum --n 1K,1M");
  b.params = {{.name = "n",
               .help = "integers to sum",
               .default_value = "1K",
               .sweepable = true,
               .kind = param_kind::size,
               .min = 1,
               .max = 1 << 20,
               .unit = "integers"}};
  b.run_point = run_sum_point;
  b.after_point.ratios = {{"speedup_pairwise_vs_serial", "serial", "pairwise"}};
  b.after_point.verify_failure = "a sum differs from n(n+1)/2";
  complete_declaration(b);
  return b;
}

/// The shipped list plus the new benchmark: the one line a new benchmark adds to registry.cpp.
std::vector<benchmark> catalog_with_sum() {
  std::vector<benchmark> catalog = all_benchmarks();
  catalog.push_back(make_sum_benchmark());
  return catalog;
}

common_options fast_cpu_options() {
  common_options opts;
  opts.cpu_only = true;
  opts.verbosity = 0;
  opts.measure.warmup = 0;
  opts.measure.min_samples = 2;
  opts.measure.max_samples = 3;
  opts.measure.min_time = 0;
  opts.measure.timeout = 0.5;
  return opts;
}

} // namespace

TEST_CASE("a new benchmark is listed beside the shipped ones, not in the binary", "[registry]") {
  const auto catalog = catalog_with_sum();
  REQUIRE(catalog.size() == all_benchmarks().size() + 1);
  const benchmark* sum = find_benchmark(catalog, "sum");
  REQUIRE(sum != nullptr);
  CHECK(sum->summary == "Sums 1..n on the CPU, serially and pairwise (a test benchmark)");
  CHECK(find_benchmark(catalog, "vecadd") != nullptr);
  CHECK(find_benchmark("sum") == nullptr); // the shipped registry does not have it
  for (const auto& b : all_benchmarks()) CHECK(b.name != "sum");
}

TEST_CASE("a new benchmark's parameters are parsed from a run file and planned", "[registry]") {
  const auto catalog = catalog_with_sum();
  const auto file = parse_run_file(
      json::parse(R"({"benchmarks": [{"benchmark": "sum", "params": {"n": "1K,4K"}}]})"), catalog);
  const auto points = plan_run_file(file, fast_cpu_options());
  REQUIRE(points.size() == 2);
  CHECK(points[0].bench->name == "sum");
  CHECK(points[0].params == json{{"n", 1000}, {"device", -1}});
  CHECK(points[1].params == json{{"n", 4000}, {"device", -1}});

  std::ostringstream listing;
  write_plan(listing, file, points, output_format::table);
  CHECK_THAT(listing.str(), Contains("run file: 2 points would run"));
  CHECK_THAT(listing.str(), Contains("sum       device=-1 n=4000"));

  // The table's range is checked for it as for every benchmark, naming the key path.
  const auto too_big =
      json::parse(R"({"benchmarks": [{"benchmark": "sum", "params": {"n": "2Mi"}}]})");
  const auto big_file = parse_run_file(too_big, catalog);
  CHECK_THROWS_WITH(plan_run_file(big_file, fast_cpu_options()),
                    Contains("benchmarks[0] (sum)") && Contains("--n"));
}

TEST_CASE("a new benchmark runs through the runner and the writers", "[registry]") {
  const auto catalog = catalog_with_sum();
  const auto opts = fast_cpu_options();
  param_values values;
  values["n"] = "1000";
  const auto points = plan_points(*find_benchmark(catalog, "sum"), values, opts);
  run_context ctx(opts);
  const run_report rep = execute(points, ctx, {"gpubench", "sum", "--n", "1000"});
  REQUIRE(rep.results.size() == 1);
  const result& r = rep.results.front();
  CHECK(r.benchmark == "sum");
  CHECK(r.status == result_status::ok);
  CHECK(r.device == -1);
  CHECK(r.params == json{{"n", 1000}});
  REQUIRE(r.measurements.size() == 2);
  CHECK(r.measurements[0].name == "serial");
  CHECK(r.measurements[0].clock == clock_kind::host);
  CHECK(r.measurements[0].stats.count >= 2);
  CHECK(r.verify.performed);
  CHECK(r.verify.passed);
  // The runner's plumbing, declared once in the table: the ratio of the medians.
  REQUIRE(r.derived.contains("speedup_pairwise_vs_serial"));
  CHECK(r.derived["speedup_pairwise_vs_serial"].get<double>() ==
        Approx(r.measurements[0].median() / r.measurements[1].median()));

  std::ostringstream table;
  write_report(table, rep, output_format::table, summary_tables(catalog));
  CHECK_THAT(table.str(), Contains("sum"));
  CHECK_THAT(table.str(), Contains("pairwise"));
  std::ostringstream as_json;
  write_report(as_json, rep, output_format::json, summary_tables(catalog));
  const json doc = json::parse(as_json.str());
  CHECK(doc["results"][0]["benchmark"] == "sum");
  CHECK(doc["results"][0]["verification"]["passed"] == true);
}
