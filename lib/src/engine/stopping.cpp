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

void sliding_line_fit::clear() {
  values_.clear();
  sum_y_ = sum_yy_ = sum_iy_ = 0;
  slides_ = 0;
}

void sliding_line_fit::recompute() noexcept {
  sum_y_ = sum_yy_ = sum_iy_ = 0;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const double y = values_[i];
    sum_y_ += y;
    sum_yy_ += y * y;
    sum_iy_ += static_cast<double>(i) * y;
  }
}

void sliding_line_fit::push(double y) {
  if (values_.size() < window_) {
    sum_iy_ += static_cast<double>(values_.size()) * y;
    values_.push_back(y);
    sum_y_ += y;
    sum_yy_ += y * y;
    return;
  }
  // The oldest value leaves from index 0 and every other one moves down an index: sum(i y) loses
  // the sum of the values that stay; the new value comes in at the last index.
  const double out = values_.front();
  values_.pop_front();
  sum_iy_ -= sum_y_ - out;
  sum_y_ -= out;
  sum_yy_ -= out * out;
  sum_iy_ += static_cast<double>(values_.size()) * y;
  values_.push_back(y);
  sum_y_ += y;
  sum_yy_ += y * y;
  if (++slides_ % window_ == 0) recompute();
}

namespace {

/// Centred sums of the window: of (i - mean i)^2, (i - mean i)(y - mean y) and (y - mean y)^2.
struct centred_sums {
  double xx = 0;
  double xy = 0;
  double yy = 0;
};

centred_sums centred(std::size_t count, double sum_y, double sum_yy, double sum_iy) {
  const auto n = static_cast<double>(count);
  const double sum_i = n * (n - 1) / 2;
  const double sum_ii = (n - 1) * n * (2 * n - 1) / 6;
  return {sum_ii - sum_i * sum_i / n, sum_iy - sum_i * sum_y / n, sum_yy - sum_y * sum_y / n};
}

/// Below this the window's values are taken as all equal (entropies are a few bits, so their
/// centred sum of squares carries rounding near 1e-11 at most).
constexpr double flat_sum_of_squares = 1e-9;

} // namespace

double sliding_line_fit::slope() const noexcept {
  if (values_.size() < 2) return 0;
  const auto c = centred(values_.size(), sum_y_, sum_yy_, sum_iy_);
  return c.xy / c.xx;
}

double sliding_line_fit::r2() const noexcept {
  if (values_.size() < 2) return 1;
  const auto c = centred(values_.size(), sum_y_, sum_yy_, sum_iy_);
  if (c.yy < flat_sum_of_squares) return 1;
  // Of a least-squares line, the explained share of the variance: (Sxy)^2 / (Sxx Syy).
  return std::clamp(c.xy * c.xy / (c.xx * c.yy), 0.0, 1.0);
}

entropy_criterion::entropy_criterion(double max_angle_deg, double min_r2)
    : max_angle_deg_(max_angle_deg), min_r2_(min_r2), fit_(entropy_window) {}

void entropy_criterion::reset() {
  counts_.clear();
  count_ = 0;
  sum_c_log2_c_ = 0;
  fit_.clear();
  angle_deg_ = 0;
  r2_ = 0;
  fitted_ = false;
}

void entropy_criterion::add(double sample) {
  // Every value that is not a finite number counts as one (a map cannot order NaN).
  const double key = std::isfinite(sample) ? sample : std::numeric_limits<double>::infinity();
  const auto c = static_cast<double>(counts_[key]++);
  const auto c_log2_c = [](double v) { return v > 0 ? v * std::log2(v) : 0.0; };
  sum_c_log2_c_ += c_log2_c(c + 1) - c_log2_c(c);
  ++count_;
  // H = -sum (c/n) log2(c/n) = log2(n) - sum(c log2 c) / n, kept up to date in O(log values).
  // With one value it is exactly 0, so a constant series has a constant history.
  const auto n = static_cast<double>(count_);
  fit_.push(counts_.size() == 1 ? 0.0 : std::max(0.0, std::log2(n) - sum_c_log2_c_ / n));
}

std::optional<stop_reason> entropy_criterion::done() {
  // As nvbench: judged on even sample counts only, with at least two entropies.
  if (fit_.size() < 2 || count_ % 2 != 0) return std::nullopt;
  angle_deg_ = std::atan(fit_.slope()) * 180 / std::numbers::pi;
  r2_ = fit_.r2();
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
  if (fit_.size() > 0) j["entropy_bits"] = fit_.values().back();
  return j;
}

} // namespace gpubench
