// The cells every report format shows alike (report_cells.hpp).
#include "report_cells.hpp"

#include "gpubench/report/text_table.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gpubench::report_detail {

using nlohmann::json;

std::string params_line(const json& params) { return params_text(params); }

std::string device_label(const run_report& rep, int id) {
  if (id < 0) return "CPU only";
  for (const auto& d : rep.devices)
    if (d.info.id == id) return fmt::format("GPU {} {}", id, d.info.name);
  return fmt::format("GPU {}", id);
}

double rate(const measurement& m, const char* key) {
  const auto it = m.rates.find(key);
  return it != m.rates.end() && it->is_number() ? it->get<double>() : -1;
}

std::string peak_text(const measurement& m) {
  const double theor = rate(m, "fraction_of_theoretical_peak");
  const double meas = rate(m, "fraction_of_measured_peak");
  // "90.2% (101.9%)" under the header "of peak (D2D)": of the theoretical peak, then of the
  // measured device-to-device copy.
  std::string out;
  if (theor >= 0) out = fmt::format("{:.1f}%", theor * 100);
  if (meas >= 0) out += fmt::format("{}({:.1f}%)", out.empty() ? "" : " ", meas * 100);
  return out;
}

std::string roof_text(const measurement& m) {
  const double f = rate(m, "fraction_of_roof");
  if (f < 0) return {};
  // Under the bandwidth roof the fraction is the theoretical one `of peak` already shows.
  const double peak = rate(m, "fraction_of_theoretical_peak");
  if (peak >= 0 && std::abs(f - peak) <= 1e-9 * std::max(f, peak)) return {};
  return fmt::format("{:.1f}%", f * 100);
}

/// The stop column: why sampling ended (legend under the table); yes/no for older files.
std::string stop_text(const measurement& m) {
  if (!m.stopped) return m.converged ? "yes" : "no";
  switch (*m.stopped) {
  case stop_reason::noise: return "noise";
  case stop_reason::stable: return "stable";
  case stop_reason::entropy: return "entropy";
  case stop_reason::max_samples: return "max-n";
  case stop_reason::timeout: return "timeout";
  case stop_reason::interrupted: return "intr";
  }
  return "?";
}

/// A row's name with its marks, as every table shows it: '*' telemetry flagged (thermal, hw
/// slowdown, contention), '^' host-bound (the host's launches paced the GPU).
std::string marked_name(const measurement& m) {
  std::string marks = telemetry_flagged(m.telemetry) ? "*" : "";
  if (m.host_bound) marks += "^";
  return marks.empty() ? m.name : m.name + " " + marks;
}

bool limit_stop(std::string_view stop) {
  return stop == "no" ||
         std::find(limit_stops.begin(), limit_stops.end(), stop) != limit_stops.end();
}

/// The rel.sd column: "-" under two samples (one sample says nothing about repeatability; a
/// --timeout shorter than a sample ends sampling there, and the stop column says so).
std::string rel_sd_text(const measurement& m) {
  return m.stats.count < 2 ? std::string("-") : fmt::format("{:.1f}%", m.stats.rel_stddev * 100);
}

} // namespace gpubench::report_detail
