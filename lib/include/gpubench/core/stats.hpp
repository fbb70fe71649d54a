#pragma once
#include <cstddef>
#include <span>

namespace gpubench {

struct summary {
  std::size_t count = 0;
  double min = 0;
  double median = 0;
  double mean = 0;
  double max = 0;
  double stddev = 0;     ///< sample standard deviation (n - 1)
  double rel_stddev = 0; ///< stddev / mean
};

/// Statistics of `samples` (any order). An empty span gives an all-zero summary.
summary summarize(std::span<const double> samples);

} // namespace gpubench
