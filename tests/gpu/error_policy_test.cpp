// The runner's error policy on a GPU: a point that does not fit in device memory, in
// the middle of a sweep, is skipped with its reason; the points before and after it are measured.
#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

using namespace gpubench;
using Catch::Matchers::Contains;

namespace {

common_options quick_options() {
  common_options opts = short_run_options();
  opts.verbosity = 0;
  opts.devices = {0};
  return opts;
}

void check_middle_point_skipped(const run_report& rep, const std::string& what) {
  REQUIRE(rep.results.size() == 3);
  CHECK(rep.results[0].status == result_status::ok);
  CHECK_FALSE(rep.results[0].measurements.empty());
  CHECK(rep.results[1].status == result_status::skipped);
  CHECK_THAT(rep.results[1].reason, Contains("out of memory") && Contains(what));
  CHECK(rep.results[2].status == result_status::ok);
  CHECK_FALSE(rep.results[2].measurements.empty());
  CHECK_FALSE(rep.meta.incomplete);
  CHECK(exit_code_for(rep) == 3); // a skipped point: README's exit-code table
}

} // namespace

TEST_CASE("augment: a batch beyond device memory in the middle of a sweep is skipped and the "
          "sweep goes on",
          "[policy][augment]") {
  // 400000 images of 256x256x3 need about 80 GB of input and 240 GB of float outputs: more than
  // any single GPU has today.
  const benchmark b = make_augment_benchmark();
  const common_options opts = quick_options();
  const auto points = plan_points(b, {{"batch", "32,400000,64"}}, opts);
  run_context ctx(opts);
  const run_report rep = execute(points, ctx, {"gpubench", "augment"});
  check_middle_point_skipped(rep, "--batch 400000");
}

TEST_CASE("pipeline: a batch beyond device memory in the middle of a sweep is skipped and the "
          "sweep goes on",
          "[policy][pipeline]") {
  // No batch of the pipeline exceeds a large GPU on its own: hold all but 4 GB of the device
  // (the batch-32 points need well under that; batch 4096 at depth 8 needs over 25 GB).
  const auto info = cuda::device_memory_info();
  constexpr std::size_t keep_free = std::size_t{4} << 30;
  REQUIRE(info.free_bytes > keep_free);
  const cuda::device_buffer<std::byte> ballast(info.free_bytes - keep_free);
  const benchmark b = make_pipeline_benchmark();
  const common_options opts = quick_options();
  const auto points = plan_points(b,
                                  {{"scenario", "augment-train"},
                                   {"mode", "serial,streams"},
                                   {"batch", "32,4096,32"},
                                   {"depth", "8"},
                                   {"steps", "4"}},
                                  opts);
  run_context ctx(opts);
  const run_report rep = execute(points, ctx, {"gpubench", "pipeline"});
  check_middle_point_skipped(rep, "batch 4096");
}
