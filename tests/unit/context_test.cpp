// Measured peaks (lib/src/engine/context.cpp): a peak measurement interrupted before its first
// sample leaves the peak unknown, so "fraction of measured peak" is left out rather than read as 0.
#include "gpubench/engine/context.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace gpubench;

namespace {

measurement copy_peak(std::vector<double> samples) {
  measurement m;
  m.name = "d2d";
  m.samples = std::move(samples);
  m.work = {2.0 * 512 * 1024 * 1024, 0, "bytes"};
  finalize(m);
  return m;
}

device_record h200_with(std::optional<double> d2d) {
  device_record d;
  d.info.bus_width_bits = 6144;
  d.info.mem_clock_khz = 3201000;
  d.d2d_bytes_per_s = d2d;
  return d;
}

measurement kernel_at(double bytes_per_s) {
  measurement m;
  m.name = "kernel";
  m.samples = {1e-3};
  m.work = {bytes_per_s * 1e-3, 1e3, "elements"};
  finalize(m);
  return m;
}

} // namespace

TEST_CASE("measured peak: the declared bytes over the median sample", "[context]") {
  const auto m = copy_peak({4e-4, 2e-4, 3e-4});
  const auto peak = measured_peak(m);
  REQUIRE(peak.has_value());
  CHECK(*peak == Approx(2.0 * 512 * 1024 * 1024 / 3e-4));
}

TEST_CASE("measured peak: a measurement without samples leaves the peak unknown", "[context]") {
  const auto m = copy_peak({}); // interrupted (SIGINT) before its first sample
  CHECK(m.stats.median == 0);   // what bytes / median would have turned into infinity
  CHECK_FALSE(measured_peak(m).has_value());
}

TEST_CASE("measured peak: an unknown peak gives no fraction of it, a known one does", "[context]") {
  auto unknown = kernel_at(4e12);
  add_peak_fractions(unknown, h200_with(measured_peak(copy_peak({}))));
  CHECK(unknown.rates.contains("fraction_of_theoretical_peak"));
  CHECK_FALSE(unknown.rates.contains("fraction_of_measured_peak"));

  auto known = kernel_at(4e12);
  add_peak_fractions(known, h200_with(4.4e12));
  REQUIRE(known.rates.contains("fraction_of_measured_peak"));
  const double fraction = known.rates["fraction_of_measured_peak"].get<double>();
  CHECK(std::isfinite(fraction));
  CHECK(fraction == Approx(4e12 / 4.4e12));
}
