// gpubench check on a real GPU: every point of the quick suite runs, verifies what it moved and
// judges its figures; a healthy GPU fails nothing against the theoretical figures, passes
// against a reference built from its own run, and a figure made 5% slower than that reference
// fails (judged on the same rows with the samples stretched, as GPUBENCH_TEST_SLOWDOWN would).
#include "gpubench/check/check_report.hpp"
#include "gpubench/check/check_suite.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <memory>

using namespace gpubench;

TEST_CASE("the quick check suite runs, verifies and judges on this GPU", "[check]") {
  // The sampling the command uses (not the short runs of other GPU tests): a 5% slower triad
  // fails only when the samples bound the shift, as a real run's do.
  common_options opts;
  opts.seed = fresh_seed();
  opts.cpu_rows = false;
  run_context ctx(opts);
  auto setup = std::make_shared<check_setup>();
  setup->quick = true;
  const auto bench = make_check_benchmark(setup);
  run_report rep;
  device_record dev = ctx.device(0);
  rep.devices.push_back(dev);
  for (const auto& p : check_points(true)) {
    INFO(p);
    result r = run_point(bench, {{"check", p}, {"device", 0}}, ctx);
    r.benchmark = "check";
    r.device = 0; // as the runner records it
    CHECK(r.status == result_status::ok);
    if (r.verify.performed) CHECK(r.verify.passed);
    REQUIRE(r.derived.contains("check"));
    for (const auto& o : r.derived["check"]) {
      INFO(o.dump());
      CHECK(o["verdict"] != "fail");
    }
    rep.results.push_back(std::move(r));
  }
  finish_checks(rep);
  const auto s = summarize_checks(rep);
  REQUIRE(s.gpus.size() == 1);
  CHECK(s.failed == 0);
  WARN(render_check(rep, check_format::table, false, 120));

  // Held to a reference of its own run: the same rows pass; the triad 5% slower fails.
  const auto ref = build_reference(rep);
  REQUIRE(ref.models.size() == 1);
  const auto& triad = *find_check_spec("hbm_triad");
  const auto& entry = ref.models[0].checks.at("hbm_triad");
  const measurement* row = nullptr;
  for (const auto& r : rep.results)
    if (r.params.value("check", "") == "hbm") row = r.find("triad");
  REQUIRE(row != nullptr);
  CHECK(judge_measured(triad, *row, entry, "own run").verdict == check_verdict::pass);
  measurement slower = *row;
  for (auto& t : slower.samples) t *= 1.05;
  slower.stats = summarize(slower.samples);
  CHECK(judge_measured(triad, slower, entry, "own run").verdict == check_verdict::fail);
}
