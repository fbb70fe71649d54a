#pragma once
// The SM clock of every GPU sample, and --reject-throttled. Each sample's clock is counted on the
// GPU around it (cuda/sm_clock_probe.hpp: clock64 cycles over %globaltimer nanoseconds on one
// SM); with --reject-throttled F a sample whose clock is below F times the median clock of the
// samples taken so far is discarded as it is taken, before the stopping rule sees it, so the rule
// and --min-samples hold on kept samples. NVML's readings, stamped on the host every 10 ms, give a
// second opinion after the fact and drop nothing (methodology.md, "The SM clock of each sample").
#include "gpubench/telemetry/telemetry.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <vector>

namespace gpubench {

/// One sample's host window: steady_clock right before the sample was taken and right after its
/// time was known (the host waited for the GPU inside it).
struct sample_window {
  std::chrono::steady_clock::time_point begin;
  std::chrono::steady_clock::time_point end;
};

/// What one SM counted across a sample: clock64 cycles over %globaltimer nanoseconds.
struct sm_clock_sample {
  double cycles = 0;
  double ns = 0;
};

/// A sample's clock is judged and recorded only when its window spans at least this many updates
/// of %globaltimer: the window's length is then known to 1% or better.
inline constexpr double clock_min_timer_steps = 100;

/// Judges and records the SM clock of one measurement's samples.
class clock_judge {
public:
  /// `fraction`: --reject-throttled (0: record only, discard nothing); `resolution_ns`: the
  /// timer's update period (cuda::globaltimer_resolution_ns()).
  clock_judge(double fraction, double resolution_ns);
  /// The clock of a valid sample as it is taken, warm-up included (nothing when the GPU gave
  /// none): a resolved one joins the running median.
  void seen(const std::optional<sm_clock_sample>& clock);
  /// For a sample of the sampling phase (the last one seen): true when it is to be discarded, its
  /// resolved clock below the fraction of the running median.
  bool discard();
  /// Every sample was discarded and the measurement keeps them all (the record says so).
  void keep_all() { all_kept_ = true; }

  /// "sm_clock": the kept samples' clock (median_mhz, min_mhz over those resolved), how many were
  /// resolved, how many were not, the timer's resolution. Empty when no sample had a clock.
  [[nodiscard]] nlohmann::json sm_clock() const;
  /// "throttled_samples": fraction, applied, clock, median_sm_clock_mhz, with_reading, kept,
  /// rejected (and why nothing was, where so).
  [[nodiscard]] nlohmann::json record(std::size_t kept) const;

private:
  double fraction_;
  double resolution_ns_;
  std::optional<double> last_mhz_; ///< the last sample seen, when resolved
  bool last_seen_ = false;
  // The running median of every resolved clock seen: the lower half in a max-heap, the upper
  // half in a min-heap.
  std::priority_queue<double> lower_;
  std::priority_queue<double, std::vector<double>, std::greater<>> upper_;
  std::vector<double> kept_mhz_;
  std::size_t unresolved_ = 0;
  std::size_t judged_ = 0;
  std::size_t rejected_ = 0;
  bool all_kept_ = false;
  [[nodiscard]] double median() const;
};

/// NVML's opinion of the kept samples: each whose lowest SM clock reading stamped inside its
/// window (windows[i] is kept sample i's) is below `fraction` times the median of all readings
/// would have been dropped. Drops nothing. Returns {median_sm_clock_mhz, with_reading,
/// below_fraction}, or {reason} when there is no reading.
nlohmann::json nvml_throttle_opinion(const std::vector<sample_window>& windows,
                                     const std::vector<gpu_reading>& readings, double fraction);

} // namespace gpubench
