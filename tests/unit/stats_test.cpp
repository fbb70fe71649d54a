#include "gpubench/core/stats.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace gpubench;

TEST_CASE("summary of a known sample", "[stats]") {
  const std::vector<double> x{4, 1, 3, 2, 5};
  const auto s = summarize(x);
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.median == 3);
  CHECK(s.mean == 3);
  CHECK(s.stddev == Approx(1.5811388300841898));
  CHECK(s.rel_stddev == Approx(1.5811388300841898 / 3));
}

TEST_CASE("median of an even count averages the middle pair", "[stats]") {
  const std::vector<double> x{10, 1, 3, 2};
  CHECK(summarize(x).median == 2.5);
}

TEST_CASE("empty and single samples", "[stats]") {
  CHECK(summarize(std::vector<double>{}).count == 0);
  const auto one = summarize(std::vector<double>{2.0});
  CHECK(one.median == 2.0);
  CHECK(one.stddev == 0);
}
