// The derived figures of a pipeline point, from its per-step measurements (seconds per step).
#include "common.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"

#include <catch2/catch.hpp>

using namespace gpubench;

namespace {

measurement timed(std::string name, std::vector<double> seconds_per_step) {
  return test::finalized(std::move(name), std::move(seconds_per_step), {0, 1, "steps"});
}

pipeline_config augment_train() {
  pipeline_config cfg;
  cfg.batch = 32;
  cfg.modes = {pipeline_mode::serial, pipeline_mode::streams, pipeline_mode::cpu_augment};
  return cfg;
}

result with_stages(std::vector<double> cpu_stage, std::vector<double> cpu_mode) {
  result r;
  r.measurements = {
      timed("stage_a", {1.0e-3, 1.0e-3, 1.0e-3}), timed("stage_b", {1.0e-3, 1.0e-3, 1.0e-3}),
      timed("serial", {2.0e-3, 2.0e-3, 2.0e-3}),  timed("streams", {1.2e-3, 1.2e-3, 1.2e-3}),
      timed("stage_a_cpu", std::move(cpu_stage)), timed("cpu_augment", std::move(cpu_mode))};
  return r;
}

} // namespace

TEST_CASE("pipeline: overlap efficiency and speedups follow from the stage times", "[pipeline]") {
  result r = with_stages({1.0e-3, 1.0e-3, 1.0e-3}, {1.2e-3, 1.2e-3, 1.2e-3});
  derive_pipeline_figures(r, augment_train(), {}, {});
  CHECK(r.derived.at("ideal_speedup").get<double>() == Approx(2.0));
  CHECK(r.derived.at("streams_speedup_vs_serial").get<double>() == Approx(2.0 / 1.2));
  // (T_serial - T) / (T_serial - max(tA, tB)) = (2 - 1.2) / (2 - 1)
  CHECK(r.derived.at("streams_overlap_efficiency").get<double>() == Approx(0.8));
  CHECK(r.derived.at("streams_images_per_s").get<double>() == Approx(32 / 1.2e-3));
  // cpu-augment against its own stages: (tA_cpu + tB - T) / min(tA_cpu, tB)
  CHECK(r.derived.at("cpu_augment_overlap_efficiency").get<double>() == Approx(0.8));
}

TEST_CASE("pipeline: a cpu-augment efficiency smaller than its noise is left out", "[pipeline]") {
  // The CPU stage is 9x stage B and varies by more than stage B lasts: the overlap can save at
  // most 1 ms of ~10, and the ratio would be noise.
  result r = with_stages({9.0e-3, 9.5e-3, 8.5e-3, 10.0e-3}, {10.0e-3, 9.0e-3, 11.0e-3});
  derive_pipeline_figures(r, augment_train(), {}, {});
  CHECK_FALSE(r.derived.contains("cpu_augment_overlap_efficiency"));
  CHECK(r.derived.contains("cpu_augment_ideal_speedup"));
  CHECK(r.derived.contains("cpu_augment_steps_per_s"));
  CHECK(r.derived.contains("streams_overlap_efficiency"));
}
