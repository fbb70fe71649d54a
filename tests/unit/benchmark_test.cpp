// Specification of the parameter tables (lib/src/engine/benchmark.cpp) and of what the runner does
// for every benchmark after a point (lib/src/engine/runner.cpp): one declaration gives the options,
// the points and their inverse, and the plumbing is written once.
#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"
#include "gpubench/registry/registry.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <set>

using namespace gpubench;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

using gpubench::test::fresh_seed;

std::vector<json> plan_of(const char* name, const param_values& given, bool cpu_only = false) {
  const benchmark* b = find_benchmark(name);
  REQUIRE(b != nullptr);
  common_options opts;
  opts.cpu_only = cpu_only;
  return b->plan(with_defaults(*b, given), opts);
}

std::string error_of(const char* name, const param_values& given) {
  try {
    (void)plan_of(name, given, true);
  } catch (const usage_error& e) {
    return e.what();
  }
  FAIL("no usage_error for " << name);
  return {};
}

} // namespace

TEST_CASE("every table: kebab-case names, once each, defaults that parse", "[benchmark]") {
  for (const auto& b : all_benchmarks()) {
    std::set<std::string> names;
    for (const auto& p : b.params) {
      INFO(b.name << " --" << p.name);
      CHECK(names.insert(p.name).second);
      CHECK(p.name.find('_') == std::string::npos);
      CHECK_FALSE(p.help.empty());
      CHECK_FALSE(param_type_name(p).empty());
      if (!p.default_value.empty()) CHECK_NOTHROW(parse_param(p, p.default_value));
    }
    CHECK(b.plan);
    CHECK(b.run_point);
  }
}

TEST_CASE("a default point read back gives the defaults of the table", "[benchmark]") {
  // The structs' own initializers must agree with the tables (the tables are what runs).
  const augment_config table = default_augment_config();
  const augment_config plain;
  CHECK(table.batch == plain.batch);
  CHECK(table.height == plain.height);
  CHECK(table.width == plain.width);
  CHECK(table.channels == plain.channels);
  CHECK(table.crop == plain.crop);
  CHECK(table.resize == plain.resize);
  CHECK(table.degrees == plain.degrees);
  CHECK(table.interp == plain.interp);
  CHECK(table.blur == plain.blur);
  CHECK(table.sigma_lo == plain.sigma_lo);
  CHECK(table.sigma_hi == plain.sigma_hi);
  CHECK(table.mean == plain.mean);
  CHECK(table.stddev == plain.stddev);
  CHECK(table.out == plain.out);

  const auto points = plan_of("augment", {});
  REQUIRE(points.size() == 1);
  const augment_config planned =
      augment_config_from_point(point_view(augment_param_table(), points[0]));
  CHECK(planned.height == table.height);
  CHECK(planned.mean == table.mean);

  const json none = json::object();
  const pipeline_config p = pipeline_config_from_point(point_view(pipeline_param_table(), none));
  const pipeline_config q;
  CHECK(p.batch == q.batch);
  CHECK(p.depth == q.depth);
  CHECK(p.steps == q.steps);
  CHECK(p.warmup_steps == q.warmup_steps);
  CHECK(p.lr == q.lr);
  CHECK(p.trainer.pool == q.trainer.pool);
  CHECK(p.trainer.hidden == q.trainer.hidden);
  CHECK(p.trainer.layers == q.trainer.layers);
  CHECK(p.trainer.outputs == q.trainer.outputs);
  CHECK(p.overlap_strip == q.overlap_strip);
  CHECK(p.coder.in_features == q.coder.in_features);
  CHECK(p.coder.enc_width == q.coder.enc_width);
  CHECK(p.coder.enc_layers == q.coder.enc_layers);
  CHECK(p.coder.dec_width == q.coder.dec_width);
  CHECK(p.coder.dec_layers == q.coder.dec_layers);
}

TEST_CASE("a vecadd sweep expands every combination in table order", "[benchmark]") {
  INFO("seed " << fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  const auto n1 = 1 + rng() % 100000;
  const auto n2 = n1 + 1 + rng() % 100000;
  const auto block = 32 * (1 + rng() % 32);
  const auto points = plan_of("vecadd", {{"n", fmt::format("{},{}", n1, n2)},
                                         {"dtype", "f32,f16"},
                                         {"kernel", "all"},
                                         {"block", std::to_string(block)}});
  REQUIRE(points.size() == 8);
  CHECK(points[0] == json({{"n", n1},
                           {"dtype", "f32"},
                           {"kernel", "seed"},
                           {"memory", "pinned"},
                           {"block", block},
                           {"grid", "vectors"},
                           {"chunks", 8},
                           {"streams", 2}}));
  CHECK(points[1].at("kernel") == "vectorized");
  CHECK(points[2].at("dtype") == "f16");
  CHECK(points[4].at("n") == n2);
  // --cpu-only leaves out what only a GPU run uses.
  const auto cpu = plan_of("vecadd", {{"n", std::to_string(n1)}}, true);
  REQUIRE(cpu.size() == 1);
  CHECK(cpu[0] == json({{"n", n1}, {"dtype", "f32"}}));
}

TEST_CASE("pipeline points carry only their scenario's parameters", "[benchmark]") {
  const auto points = plan_of("pipeline", {{"batch", "8"}});
  REQUIRE(points.size() == 2);
  CHECK(points[0].at("scenario") == "augment-train");
  CHECK(points[0].contains("pool"));
  CHECK_FALSE(points[0].contains("enc-width"));
  CHECK(points[0].at("mode") == "serial,streams,graph,cpu-augment");
  CHECK(points[1].contains("enc-width"));
  CHECK_FALSE(points[1].contains("pool"));
  CHECK(points[1].at("mode") == "serial,streams,graph");
}

TEST_CASE("values are checked against the table, naming the option", "[benchmark]") {
  CHECK_THAT(error_of("vecadd", {{"n", "0"}}),
             Contains("--n: 0 is out of range (1 to 2^36 elements)"));
  CHECK_THAT(error_of("vecadd", {{"block", "48"}}),
             Contains("--block: 48 must be a multiple of 32 from 32 to 1024"));
  CHECK_THAT(error_of("vecadd", {{"streams", "65"}}), Contains("--streams: 65 is out of range"));
  CHECK_THAT(error_of("vecadd", {{"grid", "0"}}), Contains("--grid: 0 is out of range"));
  CHECK_THAT(error_of("augment", {{"interp", "bilinaer"}}), Contains("(did you mean 'bilinear'?)"));
  CHECK_THAT(error_of("augment", {{"degrees", "200"}}), Contains("--degrees: 200 is out of range"));
  CHECK_THAT(error_of("vecadd", {{"dtpye", "f16"}}),
             Contains("unknown parameter 'dtpye' (did you mean 'dtype'?)"));
}

TEST_CASE("closest_match suggests a near name and nothing for a far one", "[benchmark]") {
  const std::vector<std::string> names{"--dtype", "--device", "--min-samples", "--max-samples"};
  CHECK(closest_match("--dtpe", names) == "--dtype");
  CHECK(closest_match("--min_samples", names) == "--min-samples");
  CHECK(closest_match("--min-sample", names) == "--min-samples");
  CHECK_FALSE(closest_match("--bogus", names).has_value());
  CHECK(closest_match("vecad", {"vecadd", "augment", "pipeline"}) == "vecadd");
  CHECK_FALSE(closest_match("", names).has_value());
}

TEST_CASE("the runner gives the verdict, the ratios and no peak fraction on the CPU",
          "[benchmark][runner]") {
  benchmark b;
  b.name = "fake";
  b.after_point.ratios = {{"speedup_fast_vs_slow", "slow", "fast"}, {"missing", "slow", "absent"}};
  b.after_point.peak_fraction_of = {"fast"};
  b.after_point.verify_failure = "fast differs from slow";
  b.run_point = [](const point_view& /*point*/, run_context& /*ctx*/) {
    result r;
    r.measurements = {test::finalized("fast", {1e-3, 1e-3}), test::finalized("slow", {4e-3})};
    verification v;
    v.performed = true;
    v.passed = false;
    r.verify.merge(v, "fast");
    return r;
  };
  complete_declaration(b);
  common_options opts;
  opts.verbosity = 0;
  run_context ctx(opts);
  const std::vector<planned_point> points{{&b, json{{"device", -1}}}};
  const run_report rep = execute(points, ctx, {"gpubench", "fake"});
  REQUIRE(rep.results.size() == 1);
  const result& r = rep.results.front();
  CHECK(r.status == result_status::failed);
  CHECK(r.reason == "fast differs from slow");
  CHECK(r.derived.at("speedup_fast_vs_slow").get<double>() == Approx(4.0));
  CHECK_FALSE(r.derived.contains("missing"));
  CHECK(r.find("fast")->rates.count("fraction_of_theoretical_peak") == 0);
}
