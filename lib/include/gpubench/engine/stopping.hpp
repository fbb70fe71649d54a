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

/// nvbench's entropy rule. After each sample, the Shannon entropy (bits) of the samples so far
/// is appended to a history; samples are counted in bins of relative width entropy_bin_width
/// (a value's bin is floor(log(x) / log1p(width)); zero and negative values share one bin). The
/// rule is met when a least-squares line through the last entropy_window entropies rises at an
/// angle of at most `max_angle_deg` degrees (atan of the slope per sample) and fits them with
/// R^2 >= `min_r2` (1 when they are all equal): the entropy has stopped growing.
class entropy_criterion final : public stopping_criterion {
public:
  entropy_criterion(double max_angle_deg, double min_r2);
  [[nodiscard]] stopping_rule rule() const noexcept override { return stopping_rule::entropy; }
  void reset() override;
  void add(double sample) override;
  std::optional<stop_reason> done() override;
  [[nodiscard]] nlohmann::json record() const override;
  /// The entropy after each sample, oldest first (at most entropy_window of them).
  [[nodiscard]] const std::deque<double>& history() const noexcept { return history_; }

private:
  double max_angle_deg_;
  double min_r2_;
  std::map<std::int64_t, std::uint64_t> bins_;
  std::uint64_t count_ = 0;
  double sum_c_log2_c_ = 0; ///< sum over bins of c * log2(c): H = log2(n) - sum / n
  std::deque<double> history_;
  double angle_deg_ = 0;
  double r2_ = 0;
  bool fitted_ = false;
};

inline constexpr double entropy_bin_width = 1e-3;          ///< 0.1% of the value
inline constexpr std::size_t entropy_window = 299;         ///< entropies the line is fitted to
inline constexpr double default_entropy_max_angle = 0.048; ///< degrees, nvbench's default
inline constexpr double default_entropy_min_r2 = 0.36;     ///< nvbench's default

/// Slope, in value per index, and R^2 of the least-squares line through (i, y[i]); R^2 is 1 when
/// every y is equal. Needs at least 2 values.
struct line_fit {
  double slope = 0;
  double r2 = 1;
};
line_fit fit_line(const std::deque<double>& y);

} // namespace gpubench
