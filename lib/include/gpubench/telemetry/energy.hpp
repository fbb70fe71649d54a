#pragma once
// Energy per operation (--energy). The GPU's cumulative energy counter advances in steps (about
// every 100 ms on an H200), so a window must span many steps: each window lasts
// max(min_ticks steps, min_window_s), at least `windows` of them start at random phases against the
// step, and the step and an idle baseline are measured in the same run. Instant power, sampled at
// 10 Hz over the same windows and integrated, cross-checks the counter. methodology.md explains.
#include "gpubench/telemetry/telemetry.hpp"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpubench {

struct energy_options {
  double min_window_s = 1.0;      ///< a window lasts at least this long ...
  int min_ticks = 10;             ///< ... and at least this many counter steps
  int windows = 5;                ///< windows, each started at a random phase against the step
  double power_hz = 10;           ///< instant-power samples per second for the cross-check
  double max_disagreement = 0.05; ///< counter vs integral above this: the row says so
  std::uint64_t seed = 42;        ///< the random phases
};

/// How long one window lasts for a counter that steps every `tick_s` seconds.
double energy_window_seconds(double tick_s, const energy_options& o);

/// Mean, coefficient of variation and the half-width of the two-sided 95% Student-t interval of
/// the mean (0 below two values).
struct interval95 {
  double mean = 0;
  double cv = 0;
  double half_width = 0;
};
interval95 mean_interval95(std::span<const double> values);
/// Two-sided 95% quantile of Student's t with `dof` degrees of freedom.
double student_t95(int dof);

/// Trapezoidal integral (J) of timestamped power samples (s, W) over [t0, t1]; the ends take the
/// nearest sample's power. 0 without samples.
double integrate_power(const std::vector<std::pair<double, double>>& samples, double t0, double t1);

/// |counter - integral| / counter, or 1 when the counter read 0.
double counter_disagreement(double counter_j, double integral_j);

/// The counter's step period from (time s, counter mJ) readings taken in a tight loop: the median
/// time between changes. 0 when fewer than two changes were seen.
double estimate_tick(const std::vector<std::pair<double, std::uint64_t>>& readings);

/// How long the step watcher of --energy sleeps before its next read of the counter: until
/// `margin_s` before the step after the one it saw at `last_step_t` is due (`tick_s` later), or 0
/// (read again at once) without a step seen yet, without a tick, or inside the margin. Reading the
/// counter takes milliseconds of a CPU; read back to back it kept a core busy all the time.
double watcher_sleep_s(double now, double last_step_t, double tick_s, double margin_s);
/// The margin the watcher starts with, as a share of the tick; it doubles each time a step comes
/// while the watcher sleeps (that step's time is not known to a read, so no window ends on it).
inline constexpr double watcher_margin_ticks = 0.15;

/// One window of a load: what the counter said, what the integral said, and the operations done.
struct energy_window {
  double seconds = 0;
  double counter_j = 0;
  double integral_j = 0;
  double ops = 0;
};

/// The "energy" object of a measurement from its windows (docs/json-schema.md). `op_unit` names
/// one operation ("element", "image", "step"); `bytes_per_op` > 0 adds bytes per joule.
nlohmann::json summarize_energy(const std::vector<energy_window>& windows, double idle_w,
                                double tick_s, double window_s, const std::string& op_unit,
                                double bytes_per_op, const energy_options& o);

/// How much of the windows the GPU spent running the work: per window, its launches (ops /
/// ops_per_launch) times `launch_s`, the GPU time of one launch back to back without host gaps,
/// over the window's time. `overall` over all windows, `lowest` the lowest window.
struct busy_reading {
  double overall = 0;
  double lowest = 0;
};
busy_reading busy_fractions(const std::vector<energy_window>& windows, double ops_per_launch,
                            double launch_s);
/// A window whose busy fraction is below this waited on the host for more than 5% of its time:
/// the energy row is marked host_bound, and its spread is the host's pace more than the GPU's.
inline constexpr double host_bound_busy = 0.95;

/// {"supported": false, "reason": ...}
nlohmann::json energy_unsupported(const std::string& reason);

/// Energy of a CPU reference from RAPL (/sys/class/powercap, package domains) over at least one
/// window of `o.min_window_s`, or {"supported": false, "reason"} where RAPL is not readable.
nlohmann::json measure_cpu_energy(const std::function<void()>& body, double ops_per_call,
                                  const std::string& op_unit, const energy_options& o);

/// One line for tables: "energy: 1.2 nJ/element (net 0.9), 512 W ..." or "energy: unsupported
/// (why)".
std::string energy_line(const nlohmann::json& energy);

} // namespace gpubench
