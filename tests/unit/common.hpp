#pragma once
// Helpers shared by the unit tests.
#include "gpubench/engine/measure.hpp"

#include <string>
#include <utility>
#include <vector>

namespace gpubench::test {

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

} // namespace gpubench::test
