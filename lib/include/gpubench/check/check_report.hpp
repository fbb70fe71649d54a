#pragma once
// A check run as a whole (docs/check.md): the checks that need the whole suite (the SM clock under
// load, throttling and other processes), the fleet rule across GPUs of one model, the verdict per
// GPU, and the formats operators' tools read. Everything here works from a run_report alone, so a
// saved check result re-renders anywhere (`gpubench report FILE --format junit`).
#include "gpubench/check/check.hpp"
#include "gpubench/results/result.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

/// One GPU's checks.
struct gpu_checks {
  int device = -1;
  std::string model;
  std::string uuid;
  std::string pci_bus_id;
  std::string host; ///< the node ("" in a run on one machine: the report's host)
  int rank = -1;    ///< the MPI rank (or --concurrent thread) that measured it; -1 alone
  /// Several ranks measured this GPU (they took turns, gpu_turn): each rank's run is its own
  /// entry, named with its rank.
  bool shared = false;
  std::vector<check_outcome> checks;
  check_verdict verdict = check_verdict::not_run;
  bool state_checked = true; ///< false: NVML could not be read
  bool outlier = false;
};

struct check_summary {
  std::vector<gpu_checks> gpus;
  int passed = 0;
  int warned = 0;
  int failed = 0;
  int outliers = 0;
  std::string slowest; ///< "node GPU n (bus)": the most outliers or the lowest ratios; "" if none
};

/// "node GPU n (bus id)", with "rank r" after the device where ranks shared the GPU: how reasons,
/// the fleet line and the slowest GPU name it.
std::string gpu_name(const gpu_checks& g);

/// Whether `r` holds results of `gpubench check`.
bool is_check_report(const run_report& r);
/// The outcomes of every check result of `r`, per GPU, in device order; usage_error naming the
/// result and key when a saved outcome is malformed.
check_summary summarize_checks(const run_report& r);

/// The fleet rule for one check over GPUs of one model: each figure against the median of the
/// others (leave-one-out), outlying when it is worse by more than the check's fail_fraction and
/// by more than 4 scaled MADs of the others. One entry per figure: null, or the finding
/// ({"peers", "peer_median", "deficit", "mads"}).
std::vector<nlohmann::json> fleet_outliers(const check_spec& spec,
                                           const std::vector<double>& figures);

/// After the suite has run on every GPU: adds the suite-wide checks (sm_clock, throttling) to each
/// GPU's state result, then applies the fleet rule (an outlier warns, its reason names its node
/// and bus id).
void finish_checks(run_report& r);

/// Judges a saved check run again against `references` (`check --from FILE`, measuring nothing):
/// each measured check from its recorded samples (judge_point, with the highest SM clock the
/// run's state recorded), the state checks kept as recorded, and what finish_checks adds (the SM
/// clock under load, throttling, the fleet rule) taken off, for finish_checks to add again.
/// Each outcome keeps the tries recorded when it was measured. usage_error when a check result
/// names no recorded device.
void rejudge_checks(run_report& r, const reference_set& references);

/// A reference from check results (one run or a fleet's, several files merged): per model and
/// measured check, each result a run (reference_entry_from_runs); the driver, runtime and date of
/// the report.
reference_set build_reference(const run_report& r);

/// 0 when no check failed (nor warned, with `strict`), else 1 (as compare's regression).
int check_exit_code(const check_summary& s, bool strict);

/// One line per GPU and check, then one line per GPU and the fleet summary; `width` columns.
void write_check_table(std::ostream& os, const check_summary& s, std::size_t width);
/// JUnit XML: a test suite per GPU, a test case per check (a failure for FAIL, skipped for not
/// run, WARN in system-out, or a failure with `strict`).
void write_check_junit(std::ostream& os, const check_summary& s, bool strict);
/// The Prometheus text exposition format (node_exporter's textfile collector): gauges per check
/// (value, ratio, verdict) and per GPU, labelled by uuid, model, node and check.
void write_check_prometheus(std::ostream& os, const check_summary& s);

/// The formats a check result is written in.
enum class check_format { table, json, junit, prometheus };
/// "table", "json", "junit" or "prometheus".
std::optional<check_format> parse_check_format(std::string_view s) noexcept;
/// The format a file's extension names (.json, .xml, .prom, .txt), if any.
std::optional<check_format> check_format_of_path(std::string_view path) noexcept;
/// `r` (a check run, finish_checks() applied) in format `f`; json is the run's gpubench/1 JSON.
std::string render_check(const run_report& r, check_format f, bool strict, std::size_t width);

} // namespace gpubench
