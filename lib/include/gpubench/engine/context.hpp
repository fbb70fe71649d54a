#pragma once
// What a benchmark driver gets besides its own parameters: options, the CPU pool, the devices it
// used (with their measured peaks), a logger and a progress line.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/engine/options.hpp"
#include "gpubench/results/result.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gpubench {

/// The bytes per second a peak measurement found, from its median; none when it has no sample
/// (interrupted before the first), which a division by its median of 0 s would make infinite.
std::optional<double> measured_peak(const measurement& m);

class run_context {
public:
  explicit run_context(common_options opts);

  [[nodiscard]] const common_options& options() const noexcept { return opts_; }
  /// The CPU threads, started on first use, inside the point that needs them: a thread that
  /// cannot start fails that point (point_error), and the next point tries again. By default one
  /// per CPU the process may run on; the first start logs when that is fewer than the machine has.
  thread_pool& cpu_pool();
  /// Stops the CPU threads; the next cpu_pool() starts them again (test-only fault injection).
  void drop_cpu_pool() noexcept { pool_.reset(); }

  /// Properties of `device`, queried once and recorded for the report.
  device_record& device(int id);
  /// Measures (once) the D2D copy peak of `device`; with `transfers` also pinned H2D and D2H.
  /// A peak whose measurement got no sample (SIGINT) stays unknown and is not cached: fractions
  /// of it are left out, and a later call measures it again.
  device_record& device_with_peaks(int id, bool transfers = false);
  [[nodiscard]] std::vector<device_record> devices_used() const;
  /// Telemetry of `device` (NVML, loaded once; telemetry.hpp): a source that says why when NVML
  /// is missing. Owned by the context.
  telemetry_source& telemetry(int id);

  /// Logs to stderr unless quiet; verbose-only messages with log_verbose.
  template <typename... Args>
  void log(fmt::format_string<Args...> f, Args&&... args) const {
    if (opts_.verbosity >= 1) log_line(fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void log_verbose(fmt::format_string<Args...> f, Args&&... args) const {
    if (opts_.verbosity >= 2) log_line(fmt::format(f, std::forward<Args>(args)...));
  }
  /// A one-line progress indicator on stderr, only when stderr is a terminal.
  void progress(std::size_t done, std::size_t total, std::string_view label) const;
  void end_progress() const;

private:
  static void log_line(const std::string& line);

  common_options opts_;
  std::unique_ptr<thread_pool> pool_;
  bool affinity_noted_ = false; ///< the CPU affinity's limit was logged (once per run)
  std::map<int, device_record> devices_;
  std::map<int, std::unique_ptr<telemetry_source>> telemetry_;
};

} // namespace gpubench
