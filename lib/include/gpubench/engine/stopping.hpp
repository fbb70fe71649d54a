#pragma once
// The stopping rules a sampling loop asks whether its samples are enough (methodology.md,
// "Stopping"). The loop (sample_until_stable, measure.hpp) keeps the bounds every rule shares:
// --min-samples and --min-time before a rule is asked, --max-samples and --timeout after it.
#include "gpubench/results/measurement.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace gpubench {

/// --stopping: stable (the default: rel. stddev or the trimmed mean's interval) or entropy
/// (nvbench's: the entropy of the samples stopped growing).
enum class stopping_rule { stable, entropy };
std::string_view to_string(stopping_rule r) noexcept;
std::optional<stopping_rule> parse_stopping_rule(std::string_view s) noexcept;

/// One rule: fed every valid sample in order, asked once the shared bounds allow a stop.
class stopping_criterion {
public:
  stopping_criterion() = default;
  stopping_criterion(const stopping_criterion&) = delete;
  stopping_criterion& operator=(const stopping_criterion&) = delete;
  stopping_criterion(stopping_criterion&&) = delete;
  stopping_criterion& operator=(stopping_criterion&&) = delete;
  virtual ~stopping_criterion() = default;
  [[nodiscard]] virtual stopping_rule rule() const noexcept = 0;
  /// Forgets every sample: the next add() starts a new measurement.
  virtual void reset() = 0;
  virtual void add(double sample) = 0;
  /// The reason to stop now as converged, or nullopt to keep sampling. Not const: a rule may
  /// space out costly checks.
  virtual std::optional<stop_reason> done() = 0;
  /// What the measurement records of the rule ("stopping" in the result): its name and, for
  /// entropy, the last fit.
  [[nodiscard]] virtual nlohmann::json record() const;
};

/// The relative half-width of the 95% interval of the 10%-trimmed mean of `samples` (winsorized
/// variance), the quantity the `stable` rule bounds. Infinite below 2 samples.
double trimmed_mean_rel_ci95(std::vector<double> samples);

/// The default rule: noise once the rel. stddev is at most `max_noise`; stable once the 95%
/// interval of the trimmed mean is within +-max_noise/4, checked at geometrically spaced counts
/// from max(20, min_samples) on.
class stable_criterion final : public stopping_criterion {
public:
  stable_criterion(double max_noise, int min_samples);
  [[nodiscard]] stopping_rule rule() const noexcept override { return stopping_rule::stable; }
  void reset() override;
  void add(double sample) override;
  std::optional<stop_reason> done() override;

private:
  double max_noise_;
  std::size_t first_check_;
  std::vector<double> samples_;
  // Running sums for the relative standard deviation, so each check is O(1).
  double sum_ = 0;
  double sum_sq_ = 0;
  std::size_t next_stable_check_;
};

/// Slope (value per index) and R^2 of the least-squares line through (i, y_i) of the last
/// `window` values pushed, each push O(1): running sums of y, y^2 and i*y that slide with the
/// window (the sums of i and i^2 follow from the count). The sums are recomputed from the kept
/// values once per `window` pushes, so rounding does not accumulate over a long measurement.
class sliding_line_fit {
public:
  explicit sliding_line_fit(std::size_t window) : window_(window) {}
  void clear();
  void push(double y);
  [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
  /// The values in the window, oldest first.
  [[nodiscard]] const std::deque<double>& values() const noexcept { return values_; }
  /// 0 with fewer than 2 values.
  [[nodiscard]] double slope() const noexcept;
  /// 1 when the values are (nearly) all equal: a flat line explains them perfectly.
  [[nodiscard]] double r2() const noexcept;

private:
  void recompute() noexcept;
  std::size_t window_;
  std::deque<double> values_;
  double sum_y_ = 0;
  double sum_yy_ = 0;
  double sum_iy_ = 0;
  std::size_t slides_ = 0;
};

/// nvbench's entropy rule, as nvbench computes it (nvbench/detail/entropy_criterion): after each
/// sample, the Shannon entropy (bits) of the samples' exact values so far is appended to a
/// history (equal timings count together; no binning). On an even sample count, a least-squares
/// line through the last entropy_window entropies is fitted (O(1), sliding_line_fit); the rule is
/// met when it rises at an angle of at most `max_angle_deg` degrees (atan of the slope per
/// sample) and fits with R^2 >= `min_r2`: the entropy has stopped growing. A timer with a coarse
/// grid (cudaEvents, 0.5 us) gives repeated values and a bounded entropy; a host clock read to
/// the nanosecond gives nearly every sample its own value, so the entropy grows as log2(n) and
/// the rule stops only near 1,800 samples, or at the shared bounds (methodology.md).
class entropy_criterion final : public stopping_criterion {
public:
  entropy_criterion(double max_angle_deg, double min_r2);
  [[nodiscard]] stopping_rule rule() const noexcept override { return stopping_rule::entropy; }
  void reset() override;
  void add(double sample) override;
  std::optional<stop_reason> done() override;
  [[nodiscard]] nlohmann::json record() const override;
  /// The entropy after each sample, oldest first (at most entropy_window of them).
  [[nodiscard]] const std::deque<double>& history() const noexcept { return fit_.values(); }

private:
  double max_angle_deg_;
  double min_r2_;
  std::map<double, std::uint64_t> counts_; ///< each distinct value and how often it came
  std::uint64_t count_ = 0;
  double sum_c_log2_c_ = 0; ///< sum over values of c * log2(c): H = log2(n) - sum / n
  sliding_line_fit fit_;
  double angle_deg_ = 0;
  double r2_ = 0;
  bool fitted_ = false;
};

inline constexpr std::size_t entropy_window = 299;         ///< entropies the line is fitted to
inline constexpr double default_entropy_max_angle = 0.048; ///< degrees, nvbench's default
inline constexpr double default_entropy_min_r2 = 0.36;     ///< nvbench's default

} // namespace gpubench
