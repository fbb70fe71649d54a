// The span of a sample from CUPTI's activity records: which records belong to the sample and what
// the span is when they overlap, come in any order or lack a timestamp.
#include "gpubench/cuda/kernel_timestamps.hpp"

#include <catch2/catch.hpp>

#include <vector>

using gpubench::cuda::activity_span_s;
using gpubench::cuda::gpu_activity;

TEST_CASE("timestamps: the span runs from the first start to the last end of the sample's work",
          "[timestamps]") {
  const std::vector<gpu_activity> records{
      {9, 100, 900},     // the flush before the sample: outside the window
      {12, 5000, 7000},  // the sample's second kernel, recorded first
      {10, 1000, 3000},  // its first kernel
      {11, 2500, 6000},  // a copy on another stream, overlapping both
      {14, 9000, 9500}}; // after the window
  const auto span = activity_span_s(records, 10, 12);
  REQUIRE(span.has_value());
  CHECK(*span == Approx(6000e-9));
  // One record alone.
  CHECK(*activity_span_s(records, 9, 9) == Approx(800e-9));
}

TEST_CASE("timestamps: no record of the sample, or one without a timestamp, gives no span",
          "[timestamps]") {
  const std::vector<gpu_activity> records{{3, 100, 200}, {7, 0, 500}, {8, 600, 400}};
  CHECK_FALSE(activity_span_s(records, 4, 6).has_value()); // dropped records
  CHECK_FALSE(activity_span_s({}, 0, 100).has_value());    // nothing recorded at all
  CHECK_FALSE(activity_span_s(records, 7, 7).has_value()); // start not collected
  CHECK_FALSE(activity_span_s(records, 8, 8).has_value()); // end before start
  CHECK_FALSE(activity_span_s(records, 5, 4).has_value()); // an empty window (no API call)
}
