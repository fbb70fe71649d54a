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

TEST_CASE("the roof at a row's intensity: compute peak above the ridge, bandwidth below",
          "[context]") {
  auto dev = h200_with(std::nullopt); // 4.92 TB/s theoretical
  dev.info.sms = 132;
  const double bw = dev.info.peak_bytes_per_s();
  const auto row = [](double flops, double bytes, double per_clock, double mhz) {
    measurement m;
    m.name = "kernel";
    m.samples = {1e-3};
    m.work = {bytes, flops, "FLOP", flops, per_clock};
    if (mhz > 0) m.sm_clock = {{"median_mhz", mhz}};
    finalize(m);
    return m;
  };
  // 1024 FLOPs a byte, 256 FLOPs per clock per SM at 1980 MHz: the compute peak is the roof.
  auto compute = row(6e10, 6e10 / 1024, 256, 1980);
  add_roof_fraction(compute, dev);
  const double peak = 256.0 * 132 * 1980e6;
  CHECK(compute.rates.at("roof_flops_per_s").get<double>() == Approx(peak));
  CHECK(compute.rates.at("fraction_of_roof").get<double>() == Approx(6e13 / peak));
  // 1/4 FLOP a byte: intensity x bandwidth is the roof.
  auto memory = row(1e9, 4e9, 256, 1980);
  add_roof_fraction(memory, dev);
  CHECK(memory.rates.at("roof_flops_per_s").get<double>() == Approx(0.25 * bw));
  // No rate of the units, no clock, or no FLOPs: no roof.
  for (auto m : {row(1e9, 4e9, 0, 1980), row(1e9, 4e9, 256, 0), row(0, 4e9, 256, 1980)}) {
    add_roof_fraction(m, dev);
    CHECK_FALSE(m.rates.contains("fraction_of_roof"));
  }
  // NVML's median reading stands in for the counted clock.
  auto nvml = row(6e10, 6e10 / 1024, 256, 0);
  nvml.telemetry = {{"sm_clock_mhz", {{"median", 1500.0}}}};
  add_roof_fraction(nvml, dev);
  CHECK(nvml.rates.at("roof_flops_per_s").get<double>() == Approx(256.0 * 132 * 1500e6));
}
