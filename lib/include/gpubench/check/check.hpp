#pragma once
// `gpubench check` (docs/check.md): what each check measures, the references it is held to, and
// the verdict rules. Plain data and pure functions: the suite that measures (check_suite.hpp),
// the fleet rule (check_fleet.hpp) and the writers (check_output.hpp) build on them, and every
// rule here is tested without a GPU.
#include "gpubench/results/measurement.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

enum class check_verdict { pass, warn, fail, not_run };
std::string_view to_string(check_verdict v) noexcept;
std::optional<check_verdict> parse_check_verdict(std::string_view s) noexcept;
/// The worse of two verdicts: fail > warn > pass; not_run ranks below pass (a check that could
/// not run fails nothing, and the GPU's line says what was not checked).
check_verdict worse(check_verdict a, check_verdict b) noexcept;

/// One measured check: the suite point that runs it, the row its figure is read from, and how far
/// below its reference it may fall.
struct check_spec {
  std::string_view id;    ///< "hbm_triad": JSON, JUnit and Prometheus name it so
  std::string_view title; ///< "HBM triad"
  std::string_view point; ///< the suite point that measures it ("hbm")
  std::string_view row;   ///< the measurement of that point it reads ("triad")
  std::string_view unit;  ///< "B/s", "FLOP/s" or "s"
  bool higher_is_better = true;
  /// Against a measured reference: the change (a relative shift of the cost, time per unit of
  /// work) beyond which the check warns, and beyond which it fails when the gate's interval lies
  /// wholly past it.
  double warn_fraction = 0;
  double fail_fraction = 0;
  /// Against the theoretical figure (no measured reference for the model): the least fraction
  /// that passes; below 0.9 of it fails. For a lower-is-better check, the most multiple.
  double theoretical_fraction = 0;
  std::string_view advice; ///< what to do when it fails (the end of the reason)
  /// The figure depends on the host as much as on the GPU (PCIe, a launch's round trip): held to
  /// a reference measured on other hosts (the shipped ones), it warns rather than fails while it
  /// keeps its theoretical floor.
  bool host_dependent = false;
};
/// Every measured check, in the order the suite runs them.
const std::vector<check_spec>& check_specs();
const check_spec* find_check_spec(std::string_view id) noexcept;
/// The suite's points in the order they run ("state", "hbm", ...); `quick` is the --quick suite.
std::vector<std::string> check_points(bool quick);

/// A reference figure of one check on one GPU model: the median of known-good runs, their spread
/// between runs (relative), and the per-sample figures of one of them for the gate's interval.
struct reference_entry {
  double median = 0;
  double spread = 0;           ///< relative spread between runs and GPUs (MAD / median, scaled)
  std::vector<double> samples; ///< figures per sample (rates, or seconds for a latency)
  int runs = 0;                ///< runs (GPUs x repeats) the median is taken over
};
struct model_reference {
  std::string model; ///< the CUDA device name ("NVIDIA H200")
  std::string driver;
  std::string runtime;
  std::string date;
  std::map<std::string, reference_entry, std::less<>> checks;
};
/// A reference file (docs/check.md, "References"): one entry per GPU model.
struct reference_set {
  std::string source; ///< the file it came from, or "shipped"
  std::vector<model_reference> models;
  [[nodiscard]] const model_reference* find(std::string_view model) const noexcept;
};
inline constexpr std::string_view reference_schema_id = "gpubench-reference/1";
/// Reads a reference file (bounded and strict as every input file); usage_error naming the key.
reference_set load_reference_file(const std::string& path);
/// Parses one (`name` names it in messages).
reference_set reference_from_json(const nlohmann::json& j, std::string_view name);
nlohmann::json to_json(const reference_set& r);
/// A reference entry from the per-sample figures of several runs of one check on one model: the
/// median of the runs' medians, their relative spread (1.4826 MAD / median; one run's own spread
/// as a floor), and the samples of the run nearest the median (at most 200).
reference_entry reference_entry_from_runs(const std::vector<std::vector<double>>& runs);
/// The references gpubench ships (references/*.json, built into the binary).
const reference_set& shipped_references();

/// The theoretical figure of a check on a GPU: what its peak would give, and how it was worked
/// out ("2 x 3.2 GHz x 6144 bits"); empty figure where the GPU's table is not known.
struct theoretical_figure {
  std::optional<double> figure;
  std::string basis; ///< how it was worked out, or why there is none
};

/// The judgement of one figure. `tries` holds each try's figure and verdict (a failing figure is
/// measured again once before it fails).
struct check_outcome {
  std::string id;
  check_verdict verdict = check_verdict::not_run;
  std::optional<double> figure;
  std::string unit;
  std::optional<double> reference;
  std::string reference_kind; ///< "measured", "theoretical", "rule" (a state check) or ""
  std::string reference_source;
  std::optional<double> ratio; ///< figure / reference
  std::string reason;          ///< one line: what was found and what to do
  nlohmann::json tries = nlohmann::json::array();
  nlohmann::json outlier; ///< the fleet rule's finding (check_fleet.hpp), null when none
};
nlohmann::json to_json(const check_outcome& o);
/// Reads one back from a saved result; usage_error naming `where` and the key.
check_outcome check_outcome_from_json(const nlohmann::json& j, const std::string& where);

/// A figure in its unit as reasons and tables write it: "4.4 TB/s", "60.9 TFLOP/s", "5.1 us",
/// "Gen5 x16" (unit GenWidth: generation x 100 + lanes), "700 W".
std::string check_figure_text(double v, std::string_view unit);
/// 1.4826 x the median absolute deviation of `v` from `median`: a robust standard deviation (0
/// for fewer than two values).
double scaled_mad(const std::vector<double>& v, double median);

/// The figure of a row: its rate (work / median) for a higher-is-better check, its median for a
/// latency; nothing when the row has no samples.
std::optional<double> row_figure(const check_spec& spec, const measurement& m);
/// The per-sample figures of a row, the same way.
std::vector<double> row_sample_figures(const check_spec& spec, const measurement& m);

/// Judges a row against a measured reference with the gate's statistics (gate_stats.hpp): the
/// Hodges-Lehmann shift of the cost (time per unit of work) between the reference's samples
/// (centred on its median) and the row's, with its 95% interval, the reference's spread between
/// runs as the allowance.
/// fail: the interval lies wholly beyond fail_fraction (+ allowance); warn: the shift's estimate
/// is beyond warn_fraction (+ allowance); pass otherwise. A row without samples is not_run.
/// `host_floor`, for a host-dependent check held to a reference from other hosts: the theoretical
/// figure, whose failing bound a figure must also cross to fail; short of it, a figure past the
/// reference's fail limit warns.
check_outcome judge_measured(const check_spec& spec, const measurement& m,
                             const reference_entry& ref, std::string_view source,
                             const theoretical_figure* host_floor = nullptr);
/// Judges a row against the theoretical figure: pass at theoretical_fraction or better, warn down
/// to 0.9 of it, fail below (a latency: the multiples, inverted).
check_outcome judge_theoretical(const check_spec& spec, const measurement& m,
                                const theoretical_figure& t);

} // namespace gpubench
