#include "gpubench/engine/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace gpubench {

std::string_view to_string(stopping_rule r) noexcept {
  return r == stopping_rule::entropy ? "entropy" : "stable";
}

std::optional<stopping_rule> parse_stopping_rule(std::string_view s) noexcept {
  for (const auto r : {stopping_rule::stable, stopping_rule::entropy})
    if (to_string(r) == s) return r;
  return std::nullopt;
}

nlohmann::json stopping_criterion::record() const {
  return nlohmann::json{{"rule", std::string(to_string(rule()))}};
}

double trimmed_mean_rel_ci95(std::vector<double> samples) {
  const std::size_t n = samples.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  std::sort(samples.begin(), samples.end());
  const std::size_t g = n / 10; // trimmed at each end
  const double lo = samples[g];
  const double hi = samples[n - 1 - g];
  double trimmed = 0;
  for (std::size_t i = g; i < n - g; ++i) trimmed += samples[i];
  trimmed /= static_cast<double>(n - 2 * g);
  // Winsorized variance: the trimmed samples replaced by the nearest kept one.
  double w_mean = 0;
  for (const double x : samples) w_mean += std::clamp(x, lo, hi);
  w_mean /= static_cast<double>(n);
  double w_var = 0;
  for (const double x : samples) {
    const double d = std::clamp(x, lo, hi) - w_mean;
    w_var += d * d;
  }
  w_var /= static_cast<double>(n - 1);
  const double kept = static_cast<double>(n - 2 * g) / static_cast<double>(n);
  const double se = std::sqrt(w_var) / (kept * std::sqrt(static_cast<double>(n)));
  return trimmed > 0 ? 1.96 * se / trimmed : std::numeric_limits<double>::infinity();
}

stable_criterion::stable_criterion(double max_noise, int min_samples)
    : max_noise_(max_noise),
      first_check_(std::max<std::size_t>(20, static_cast<std::size_t>(std::max(0, min_samples)))),
      next_stable_check_(first_check_) {}

void stable_criterion::reset() {
  samples_.clear();
  sum_ = 0;
  sum_sq_ = 0;
  next_stable_check_ = first_check_;
}

void stable_criterion::add(double sample) {
  samples_.push_back(sample);
  sum_ += sample;
  sum_sq_ += sample * sample;
}

std::optional<stop_reason> stable_criterion::done() {
  const auto n = static_cast<double>(samples_.size());
  if (samples_.size() < 2) return std::nullopt;
  const double mean = sum_ / n;
  const double var = std::max(0.0, (sum_sq_ - n * mean * mean) / (n - 1));
  if (mean > 0 && std::sqrt(var) / mean <= max_noise_) return stop_reason::noise;
  // The trimmed interval sorts the samples: checked at geometrically spaced counts only.
  if (samples_.size() >= next_stable_check_) {
    next_stable_check_ = samples_.size() + std::max<std::size_t>(1, samples_.size() / 8);
    if (trimmed_mean_rel_ci95(samples_) <= max_noise_ / 4) return stop_reason::stable;
  }
  return std::nullopt;
}

line_fit fit_line(const std::deque<double>& y) {
  const auto n = static_cast<double>(y.size());
  const double x_mean = (n - 1) / 2;
  double y_mean = 0;
  for (const double v : y) y_mean += v;
  y_mean /= n;
  double sxy = 0;
  double sxx = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double dx = static_cast<double>(i) - x_mean;
    sxy += dx * (y[i] - y_mean);
    sxx += dx * dx;
  }
  line_fit fit;
  fit.slope = sxx > 0 ? sxy / sxx : 0;
  double ss_res = 0;
  double ss_tot = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double predicted = y_mean + fit.slope * (static_cast<double>(i) - x_mean);
    ss_res += (y[i] - predicted) * (y[i] - predicted);
    ss_tot += (y[i] - y_mean) * (y[i] - y_mean);
  }
  fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  return fit;
}

entropy_criterion::entropy_criterion(double max_angle_deg, double min_r2)
    : max_angle_deg_(max_angle_deg), min_r2_(min_r2) {}

void entropy_criterion::reset() {
  bins_.clear();
  count_ = 0;
  sum_c_log2_c_ = 0;
  history_.clear();
  angle_deg_ = 0;
  r2_ = 0;
  fitted_ = false;
}

void entropy_criterion::add(double sample) {
  static const double log_step = std::log1p(entropy_bin_width);
  const std::int64_t bin = sample > 0 && std::isfinite(sample)
                               ? static_cast<std::int64_t>(std::floor(std::log(sample) / log_step))
                               : std::numeric_limits<std::int64_t>::min();
  const auto c = static_cast<double>(bins_[bin]++);
  const auto c_log2_c = [](double v) { return v > 0 ? v * std::log2(v) : 0.0; };
  sum_c_log2_c_ += c_log2_c(c + 1) - c_log2_c(c);
  ++count_;
  // H = -sum (c/n) log2(c/n) = log2(n) - sum(c log2 c) / n, kept up to date in O(log bins). With
  // one bin it is exactly 0, so a constant series has a constant history.
  const auto n = static_cast<double>(count_);
  const double h = bins_.size() == 1 ? 0.0 : std::max(0.0, std::log2(n) - sum_c_log2_c_ / n);
  history_.push_back(h);
  if (history_.size() > entropy_window) history_.pop_front();
}

std::optional<stop_reason> entropy_criterion::done() {
  if (history_.size() < 2) return std::nullopt;
  const auto fit = fit_line(history_);
  angle_deg_ = std::atan(fit.slope) * 180 / std::numbers::pi;
  r2_ = fit.r2;
  fitted_ = true;
  if (angle_deg_ <= max_angle_deg_ && r2_ >= min_r2_) return stop_reason::entropy;
  return std::nullopt;
}

nlohmann::json entropy_criterion::record() const {
  auto j = stopping_criterion::record();
  j["max_angle_deg"] = max_angle_deg_;
  j["min_r2"] = min_r2_;
  if (fitted_) {
    j["angle_deg"] = angle_deg_;
    j["r2"] = r2_;
  }
  if (!history_.empty()) j["entropy_bits"] = history_.back();
  return j;
}

} // namespace gpubench
