#pragma once
// Comparing runs (compare BASE NEW, or K files a side): the regression gate of docs/compare.md.
// The statistics are in gate_stats.hpp; compare_runs returns rows and write_comparison renders
// them, so the output can move alone. Result files are read by results/result_files.hpp.
#include "gpubench/gate/gate_stats.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/results/result.hpp"
#include "gpubench/results/result_files.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

std::string_view to_string(verdict v) noexcept;

/// "5%" or "5" (both 5 percent) as the fraction 0.05; usage_error naming `option` otherwise.
double parse_percentage(std::string_view text, std::string_view option);

/// The rows of a comparison, by what paced their timings; each class is gated at its own threshold
/// (docs/compare.md). `gpu`: GPU-clock rows that are not host-bound, always gated. `host`:
/// host-clock rows (CPU references, wall-clock times), which move with the host between processes.
/// `host_bound`: GPU rows whose timeline waited on the host's enqueue. The last two are judged
/// and shown but gated only on request (compare --gate).
enum class gate_class { gpu, host, host_bound };
/// "gpu", "host", "host-bound": the spelling of compare --gate.
std::string_view to_string(gate_class g) noexcept;

/// The thresholds of the classes gated on request, when asked for without a value. Host timings
/// spread far more on a shared host (CPU references by 56-179% over 10 processes on an H200
/// host): gating them is for a quiet host, where 25% still leaves room. Host-bound rows spread by
/// up to 62% (docs/ci.md).
inline constexpr double default_host_threshold = 0.25;
inline constexpr double default_host_bound_threshold = 0.60;

struct compare_options {
  double threshold = 0.05; ///< relative slowdown that fails the gate on GPU rows (fraction)
  double alpha = 0.10;     ///< the interval is (1 - alpha) two-sided: alpha / 2 per verdict
  /// Equivalence margin of "same"; negative: half the threshold.
  double same_margin = -1;
  /// Added to the threshold when a side has one run (between-run noise unknown).
  double run_noise = 0.10;
  /// Threshold for host-clock measurements; empty: they are judged but never fail.
  std::optional<double> host_threshold;
  /// Threshold for measurements marked host_bound; empty: they are judged but never fail.
  std::optional<double> host_bound_threshold;
  /// Share of BASE's measurements (on the judged clock) that must be compared, else exit 2.
  double min_compared = 0.9;
  /// Compare different GPU models (matching without the device name), drivers, or runs whose
  /// telemetry flags differ.
  bool allow_device_mismatch = false;
  bool force = false;
  /// Only judge measurements on this clock ("gpu" or "host"); empty judges all.
  std::string clock;

  [[nodiscard]] double margin() const noexcept {
    return same_margin >= 0 ? same_margin : threshold / 2;
  }
};

/// The verdict of one measurement from its runs (each a vector of raw samples, seconds, lower is
/// better). Two or more runs a side: the Hodges-Lehmann shift of the per-run medians (in log
/// space) and its distribution-free interval. One run on a side: the shift of the raw samples,
/// and "slower"/"faster" need the interval beyond threshold + run_noise.
struct measurement_verdict {
  double base_median = 0; ///< median of the per-run medians
  double new_median = 0;
  double change = 0; ///< Hodges-Lehmann estimate as new / base - 1
  double lo = 0;     ///< interval of the change; -inf/+inf when none exists at this level
  double hi = 0;
  double coverage = 0;
  bool bounded = false;
  std::size_t base_runs = 0;
  std::size_t new_runs = 0;
  bool between_runs = false; ///< judged on the spread between runs
  double limit = 0;          ///< the slowdown the interval had to exceed
  verdict outcome = verdict::inconclusive;
  std::string note;
  double p_value = 1; ///< Mann-Whitney U of the pooled samples, for reference
};
measurement_verdict judge_runs(const std::vector<std::vector<double>>& base,
                               const std::vector<std::vector<double>>& candidate,
                               const compare_options& opts, double threshold);
/// One run a side.
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
  bool host_bound = false;            ///< marked so by the benchmark on either side
  clock_kind clock = clock_kind::gpu; ///< host when timed on the host clock on either side
  gate_class kind = gate_class::gpu;  ///< host clock first, then host-bound, else gpu
  bool gated = true; ///< false: judged and shown but never fails (its class is not gated)
  /// The threshold the row was judged at: its class's when gated, else the GPU threshold.
  double threshold = 0.05;
  measurement_verdict result;
  /// A slowdown whose whole interval lies beyond the limit, on a gated row: fails the gate.
  [[nodiscard]] bool regression() const noexcept {
    return gated && result.outcome == verdict::slower;
  }
};

/// One side's environment, shown side by side and checked before comparing.
struct side_environment {
  std::vector<std::string> files;
  std::size_t runs = 0;
  std::vector<std::string> gpus;
  std::string driver;        ///< the CUDA level the driver supports ("13.0")
  std::string nvidia_driver; ///< the NVIDIA driver's version ("580.65.06"); empty in older files
  std::string runtime;
  std::string git;
  /// The distinct source hashes of the side's files (meta.build.source_sha256), "" for a file
  /// that records none, in the order first seen.
  std::vector<std::string> source_hashes;
  std::string host;
  std::string started_at;
  std::optional<double> sm_clock_mhz; ///< median over measurements with telemetry
  std::optional<double> mem_clock_mhz;
  std::vector<std::string> flags; ///< telemetry flags seen on any measurement
  std::string test_slowdown;      ///< GPUBENCH_TEST_SLOWDOWN when the run had it
};

/// Whether BASE and NEW were measured by the same code: every file of both sides records one and
/// the same source hash. false when they differ, nullopt when a file records none (written before
/// gpubench recorded it) and nothing differs.
std::optional<bool> same_code(const side_environment& base, const side_environment& fresh);

/// One line for compare's header: "Code: same (sources sha256 0123456789ab)", "Code: DIFFERS
/// (...)" or "Code: not known to be the same (...)".
std::string code_line(const side_environment& base, const side_environment& fresh);

struct comparison {
  double threshold = 0.05;
  double alpha = 0.10;
  double same_margin = 0.025;
  double run_noise = 0.10;
  std::optional<double> host_threshold;
  std::optional<double> host_bound_threshold;
  double min_compared = 0.9;
  std::vector<comparison_row> rows;
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_new;
  std::vector<std::string> notes;    ///< e.g. results not compared because a side was skipped
  std::vector<std::string> warnings; ///< environment differences let through by --force, test knobs
  side_environment base_env;
  side_environment new_env;
  std::size_t base_measurements = 0; ///< BASE's measurements on the judged clock

  [[nodiscard]] std::size_t regressions() const noexcept;
  /// Rows of a class (gated or not).
  [[nodiscard]] std::size_t rows_of(gate_class g) const noexcept;
  /// Rows that can fail the gate.
  [[nodiscard]] std::size_t gated_rows() const noexcept;
  /// Whether a class is gated, and at which threshold (empty: judged, not gated).
  [[nodiscard]] std::optional<double> threshold_of(gate_class g) const noexcept;
  /// rows / base_measurements (1 when BASE has none).
  [[nodiscard]] double compared_share() const noexcept;
  /// Nothing compared, or less than min_compared of BASE.
  [[nodiscard]] bool coverage_short() const noexcept;
};

/// Matches results by benchmark, parameters (output-only ones left out) and device name, then
/// measurements by name; runs come from the files of a side and from "repeat" tags in them.
/// Throws usage_error if the sides ran on different GPU models or drivers, or their telemetry
/// flags differ in a flagged way (thermal, hw_slowdown, contention), unless forced.
comparison compare_runs(std::span<const result_file> base, std::span<const result_file> candidate,
                        const compare_options& opts);
comparison compare_reports(const run_report& base, const run_report& candidate,
                           const compare_options& opts);

/// The identity of a point: its parameters without the output-only ones (save-samples, output;
/// input's folder path becomes a marker, so real and synthetic images still differ).
nlohmann::json identity_params(const nlohmann::json& params);

/// Why a row is or is not gated, one phrase for the JSON, JUnit and CSV outputs, e.g. "host
/// clock: not gated (--gate host gates it at 25.0%)".
std::string gate_reason(const comparison_row& row);

/// 1 when any gated row is a slowdown beyond its limit; else 2 when the comparison covered too
/// little of BASE; else 0.
int exit_code_for(const comparison& c);

nlohmann::json to_json(const comparison& c);
/// table and md render the environments, then rows with base, new, change, interval and
/// verdict; json is to_json; csv is one row per measurement.
void write_comparison(std::ostream& os, const comparison& c, output_format format);
/// A history of runs for its page (report FILE... --format html): the files in groups that may
/// be compared (one schema, one set of GPU names, one set of benchmarks, in the order first met),
/// each group's files in the order of their start time (the order given when a file has none),
/// and compare's JSON for each pair of consecutive runs of a group, judged with --force and no
/// coverage limit. {"groups": [{"files": [index...], "dated": bool, "comparisons":
/// [comparison JSON or {"error": reason}, ...]}]}; indices into `files`.
nlohmann::json history_comparisons(std::span<const result_file> files);

/// JUnit XML: a test case per row (regressions fail, inconclusive are skipped) and one for the
/// coverage of BASE.
void write_junit(std::ostream& os, const comparison& c);

} // namespace gpubench
