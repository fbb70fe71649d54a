#pragma once
// Saved results in: a report file loaded (bounded and validated), kept with its raw JSON for
// compare, and several reports merged into one for `report FILE...`.
#include "gpubench/results/result.hpp"

#include <nlohmann/json.hpp>

#include <span>
#include <string>

namespace gpubench {

/// Reads a saved JSON report; errors (unreadable, not JSON, not gpubench/1) are usage_errors
/// prefixed with the path.
run_report load_report(const std::string& path);

/// A result file as compare reads it: the model plus the raw JSON, for the fields other
/// engineers' features add (telemetry, repeat tags) that the model need not know.
struct result_file {
  std::string path;
  run_report report;
  nlohmann::json raw;
};
result_file load_result_file(const std::string& path);
/// A report already in memory (tests, compare_reports): raw is its JSON.
result_file as_result_file(const run_report& r, std::string label);

/// Combines several reports into one: results in order, devices renumbered where two files use
/// the same id for different GPUs, meta of the first file (incomplete if any input is).
run_report merge_reports(std::span<const run_report> reports);

} // namespace gpubench
