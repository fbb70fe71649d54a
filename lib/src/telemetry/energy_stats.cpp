// Energy statistics: window sizing, the 95% interval, the power integral that cross-checks the
// counter, the summary JSON of a set of windows, and the line the tables print.
#include "gpubench/telemetry/energy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpubench {
using nlohmann::json;

double energy_window_seconds(double tick_s, const energy_options& o) {
  return std::max(o.min_window_s, o.min_ticks * std::max(tick_s, 0.0));
}

double watcher_sleep_s(double now, double last_step_t, double tick_s, double margin_s) {
  if (!(tick_s > 0) || last_step_t < 0) return 0;
  return std::max(0.0, last_step_t + tick_s - margin_s - now);
}

double student_t95(int dof) {
  // Two-sided 95% quantiles of Student's t; beyond 30 degrees of freedom the normal's 1.96 is
  // within 2%.
  static constexpr double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                     2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                     2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                     2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return std::numeric_limits<double>::infinity();
  if (dof <= 30) return table[dof - 1];
  return 1.96;
}

interval95 mean_interval95(std::span<const double> values) {
  interval95 out;
  const std::size_t n = values.size();
  if (n == 0) return out;
  double sum = 0;
  for (const double v : values) sum += v;
  out.mean = sum / static_cast<double>(n);
  if (n < 2) return out;
  double ss = 0;
  for (const double v : values) ss += (v - out.mean) * (v - out.mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  out.cv = out.mean != 0 ? sd / std::abs(out.mean) : 0;
  out.half_width = student_t95(static_cast<int>(n) - 1) * sd / std::sqrt(static_cast<double>(n));
  return out;
}

double integrate_power(const std::vector<std::pair<double, double>>& samples, double t0,
                       double t1) {
  if (samples.empty() || !(t1 > t0)) return 0;
  const auto power_at = [&](double t) {
    // Linear between the samples around t, the nearest sample's value beyond them.
    if (t <= samples.front().first) return samples.front().second;
    if (t >= samples.back().first) return samples.back().second;
    const auto it = std::upper_bound(samples.begin(), samples.end(), t,
                                     [](double x, const auto& s) { return x < s.first; });
    const auto& [ta, pa] = *(it - 1);
    const auto& [tb, pb] = *it;
    return tb > ta ? pa + (pb - pa) * (t - ta) / (tb - ta) : pb;
  };
  double joules = 0;
  double t = t0;
  double p = power_at(t0);
  for (const auto& [ts, ps] : samples) {
    if (ts <= t0) continue;
    if (ts >= t1) break;
    joules += 0.5 * (p + ps) * (ts - t);
    t = ts;
    p = ps;
  }
  joules += 0.5 * (p + power_at(t1)) * (t1 - t);
  return joules;
}

double counter_disagreement(double counter_j, double integral_j) {
  if (!(counter_j > 0)) return 1;
  return std::abs(counter_j - integral_j) / counter_j;
}

double estimate_tick(const std::vector<std::pair<double, std::uint64_t>>& readings) {
  std::vector<double> changes;
  for (std::size_t i = 1; i < readings.size(); ++i)
    if (readings[i].second != readings[i - 1].second) changes.push_back(readings[i].first);
  if (changes.size() < 2) return 0;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < changes.size(); ++i) gaps.push_back(changes[i] - changes[i - 1]);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  return gaps[gaps.size() / 2];
}

json energy_unsupported(const std::string& reason) {
  return json{{"supported", false}, {"reason", reason}};
}

busy_reading busy_fractions(const std::vector<energy_window>& windows, double ops_per_launch,
                            double launch_s) {
  busy_reading b;
  if (!(ops_per_launch > 0) || !(launch_s > 0)) return b;
  double busy_s = 0;
  double seconds = 0;
  bool first = true;
  for (const auto& w : windows) {
    if (!(w.seconds > 0)) continue;
    const double busy = w.ops / ops_per_launch * launch_s;
    busy_s += busy;
    seconds += w.seconds;
    b.lowest = first ? busy / w.seconds : std::min(b.lowest, busy / w.seconds);
    first = false;
  }
  if (seconds > 0) b.overall = busy_s / seconds;
  return b;
}

json summarize_energy(const std::vector<energy_window>& windows, double idle_w, double tick_s,
                      double window_s, const std::string& op_unit, double bytes_per_op,
                      const energy_options& o) {
  std::vector<double> gross;
  std::vector<double> net;
  std::vector<double> watts;
  double counter = 0;
  double integral = 0;
  double seconds = 0;
  double ops = 0;
  json per_window = json::array();
  for (const auto& w : windows) {
    if (!(w.ops > 0) || !(w.seconds > 0)) continue;
    gross.push_back(w.counter_j / w.ops);
    net.push_back((w.counter_j - idle_w * w.seconds) / w.ops);
    watts.push_back(w.counter_j / w.seconds);
    counter += w.counter_j;
    integral += w.integral_j;
    seconds += w.seconds;
    ops += w.ops;
    per_window.push_back(json{{"seconds", w.seconds},
                              {"counter_j", w.counter_j},
                              {"integral_j", w.integral_j},
                              {"ops", w.ops}});
  }
  if (gross.empty()) return energy_unsupported("no window completed");
  const auto g = mean_interval95(gross);
  const auto n = mean_interval95(net);
  const auto w = mean_interval95(watts);
  const double disagreement = counter_disagreement(counter, integral);
  json j{{"supported", true},
         {"source", "nvml_total_energy_counter"},
         {"op_unit", op_unit},
         {"tick_s", tick_s},
         {"window_s", window_s},
         {"windows", gross.size()},
         {"idle_w", idle_w},
         {"mean_w", w.mean},
         {"j_per_op", g.mean},
         {"j_per_op_net", n.mean},
         {"cv", g.cv},
         {"ci95_j_per_op", {g.mean - g.half_width, g.mean + g.half_width}},
         {"ci95_rel", g.mean > 0 ? g.half_width / g.mean : 0.0},
         {"ops_per_j", g.mean > 0 ? 1 / g.mean : 0.0},
         {"ops_per_s", seconds > 0 ? ops / seconds : 0.0},
         {"counter_vs_integral", disagreement},
         {"disagreement_flag", disagreement > o.max_disagreement},
         {"per_window", per_window}};
  if (bytes_per_op > 0 && g.mean > 0) j["bytes_per_j"] = bytes_per_op / g.mean;
  return j;
}

namespace {
std::string joules(double j) {
  const double a = std::abs(j);
  if (a >= 1) return fmt::format("{:.3g} J", j);
  if (a >= 1e-3) return fmt::format("{:.3g} mJ", j * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3g} uJ", j * 1e6);
  if (a >= 1e-9) return fmt::format("{:.3g} nJ", j * 1e9);
  return fmt::format("{:.3g} pJ", j * 1e12);
}
} // namespace

std::string energy_line(const json& e) {
  if (!e.is_object() || e.empty()) return {};
  if (!e.value("supported", false))
    return fmt::format("energy: unsupported ({})", e.value("reason", std::string("unknown")));
  const std::string unit = e.value("op_unit", std::string("op"));
  std::string out = fmt::format(
      "energy: {}/{} (net of idle {}), mean {:.1f} W (idle {:.1f} W), CV {:.2f}%, 95% +-{:.2f}% "
      "over {} windows of {:.2f} s",
      joules(e.value("j_per_op", 0.0)), unit, joules(e.value("j_per_op_net", 0.0)),
      e.value("mean_w", 0.0), e.value("idle_w", 0.0), e.value("cv", 0.0) * 100,
      e.value("ci95_rel", 0.0) * 100, e.value("windows", 0), e.value("window_s", 0.0));
  out += fmt::format(", {:.4g} {}s/J", e.value("ops_per_j", 0.0), unit);
  if (const auto it = e.find("bytes_per_j"); it != e.end() && it->is_number())
    out += fmt::format(", {:.3g} GB/s per W", it->get<double>() * 1e-9);
  if (const auto it = e.find("counter_vs_integral"); it != e.end() && it->is_number())
    out += fmt::format(", counter vs power integral {:.1f}%{}", it->get<double>() * 100,
                       e.value("disagreement_flag", false) ? " (DISAGREE > 5%)" : "");
  if (const auto it = e.find("busy_fraction"); it != e.end() && it->is_number()) {
    out += fmt::format(", GPU busy {:.0f}%", it->get<double>() * 100);
    // Files written before the lowest window was recorded judged the overall fraction.
    const auto lowest = e.find("busy_fraction_min");
    const bool low_window = lowest != e.end() && lowest->is_number();
    if (e.value("host_bound", false))
      out += low_window ? fmt::format(" (lowest window {:.0f}%; HOST-BOUND: the GPU waited on the "
                                      "host, so the spread follows the host's pace)",
                                      lowest->get<double>() * 100)
                        : " (HOST-BOUND: the GPU waited on the host)";
  } else if (e.value("host_bound", false)) {
    // No busy fraction: the body waits inside its launches (busy_unmeasured says how long).
    out +=
        ", HOST-BOUND: the body waits inside its launches, so the spread follows the host's pace";
  }
  return out;
}

} // namespace gpubench
