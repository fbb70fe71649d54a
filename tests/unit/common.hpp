#pragma once
// Helpers shared by the unit tests.
#include "gpubench/engine/measure.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gpubench::test {

/// The seed of this test run's random inputs: drawn once a process, so that a test prints the
/// seed it used (INFO) and a failure can be replayed with it.
inline std::uint64_t fresh_seed() {
  static const std::uint64_t seed = std::random_device{}();
  return seed;
}

/// A measurement with these samples (seconds) and statistics computed, as the engine leaves it.
inline measurement finalized(std::string name, std::vector<double> samples,
                             work_counts work = {1e6, 1e3, "elements"}) {
  measurement m;
  m.name = std::move(name);
  m.samples = std::move(samples);
  m.work = std::move(work);
  finalize(m);
  return m;
}

/// Options for a sampling loop driven by a test's own samples: no warm-up, no minimum time, a
/// timeout no test reaches, between `min_samples` and `max_samples` samples.
inline measure_options loop_options(int min_samples, int max_samples) {
  measure_options o;
  o.warmup = 0;
  o.min_samples = min_samples;
  o.max_samples = max_samples;
  o.min_time = 0;
  o.timeout = 60;
  return o;
}

} // namespace gpubench::test
