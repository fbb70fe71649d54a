#pragma once
// Shared by the GPU test files.
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/options.hpp"
#include "gpubench/engine/point.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

namespace gpubench {

/// The seed of every random input of this run of the GPU tests: fresh each run, so runs cover new
/// data, and printed once (with the first test that asks) so a failure can be reproduced.
inline std::uint64_t fresh_seed() {
  static const std::uint64_t seed = std::random_device{}();
  static bool printed = false;
  if (!printed) {
    printed = true;
    WARN("GPU tests seed: " << seed);
  }
  return seed;
}

/// Options for a driver run that checks behaviour, not speed: no warm-up, 2 to 3 samples, at most
/// half a second a row, and this run's fresh seed.
inline common_options short_run_options() {
  common_options opts;
  opts.measure.warmup = 0;
  opts.measure.min_samples = 2;
  opts.measure.max_samples = 3;
  opts.measure.min_time = 0;
  opts.measure.timeout = 0.5;
  opts.seed = fresh_seed();
  return opts;
}

/// Runs `point` (with its "device") of benchmark `b` as the runner does: through its typed view.
inline result run_point(const benchmark& b, const nlohmann::json& point, run_context& ctx) {
  return b.run_point(point_view(b.params, point), ctx);
}

} // namespace gpubench
