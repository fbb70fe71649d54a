#pragma once
// Saved results: loading, merging (report FILE...) and comparing two runs (compare BASE NEW), the
// regression gate of docs/compare.md.
#include "gpubench/report.hpp"
#include "gpubench/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// Reads a saved JSON report; errors (unreadable, not JSON, not gpubench/1) are usage_errors
/// prefixed with the path.
run_report load_report(const std::string& path);

/// Combines several reports into one: results in order, devices renumbered where two files use
/// the same id for different GPUs, meta of the first file (incomplete if any input is).
run_report merge_reports(std::span<const run_report> reports);

/// Two-sided Mann-Whitney U test of "a and b come from the same distribution", by the normal
/// approximation with tie correction and continuity correction.
struct rank_test {
  double u = 0;       ///< U statistic of `a` (number of pairs with a > b, ties counting 1/2)
  double z = 0;       ///< standardized U, positive when `a` tends to be larger
  double p_value = 1; ///< two-sided; 1 when either side is empty or all values are tied
};
rank_test mann_whitney_u(std::span<const double> a, std::span<const double> b);

enum class verdict { faster, slower, same, inconclusive };
std::string_view to_string(verdict v) noexcept;

/// "5%" or "5" (both 5 percent) as the fraction 0.05; usage_error naming `option` otherwise.
double parse_percentage(std::string_view text, std::string_view option);

struct compare_options {
  double threshold = 0.05; ///< relative change of the median that matters (fraction)
  double alpha = 0.05;     ///< significance level of the rank test
  bool allow_device_mismatch = false;
  /// Only judge measurements on this clock ("gpu" or "host"); empty judges all. Host timings of
  /// a shared machine drift by 10-20% between runs, so CI gates usually judge the GPU clock.
  std::string clock;
};

/// Decides one measurement from its raw samples (seconds, lower is better):
/// fewer than 2 samples on a side -> inconclusive; |change of median| <= threshold -> same;
/// beyond the threshold and p < alpha -> faster or slower; beyond it but not significant ->
/// inconclusive.
struct measurement_verdict {
  double base_median = 0;
  double new_median = 0;
  double change = 0; ///< new_median / base_median - 1
  double p_value = 1;
  verdict outcome = verdict::inconclusive;
  std::string note; ///< why inconclusive, when it is
};
measurement_verdict judge(std::span<const double> base, std::span<const double> candidate,
                          const compare_options& opts);

// NOLINTNEXTLINE(bugprone-exception-escape): flags the implicit members through nlohmann::json
struct comparison_row {
  std::string benchmark;
  std::string device; ///< GPU name, or "cpu" for results without a device
  nlohmann::json params;
  std::string measurement;
  std::size_t base_samples = 0;
  std::size_t new_samples = 0;
  measurement_verdict result;
  /// A significant slowdown beyond the threshold: this row fails the gate.
  [[nodiscard]] bool regression() const noexcept { return result.outcome == verdict::slower; }
};

/// What exists in only one of the files, as "benchmark [device] params: measurement" lines.
struct comparison {
  double threshold = 0.05;
  double alpha = 0.05;
  std::vector<comparison_row> rows;
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_new;
  std::vector<std::string> notes; ///< e.g. results not compared because a side was skipped

  [[nodiscard]] std::size_t regressions() const noexcept;
};

/// Matches results by benchmark, parameters and device name, then measurements by name. Throws
/// usage_error if the two runs used different GPU models, unless allow_device_mismatch (then the
/// device name is left out of the match).
comparison compare_reports(const run_report& base, const run_report& candidate,
                           const compare_options& opts);

/// 1 when any row is a significant slowdown beyond the threshold, else 0.
int exit_code_for(const comparison& c);

nlohmann::json to_json(const comparison& c);
/// table and md render rows with base median, new median, change and verdict; json is to_json;
/// csv is one row per measurement.
void write_comparison(std::ostream& os, const comparison& c, output_format format);

} // namespace gpubench
