#pragma once
// Run files (docs/run-files.md): a JSON document listing benchmarks, their parameters (a list makes
// a sweep) and the measurement options, run as one invocation with one combined report.
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/options.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/report/report.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// One entry of "benchmarks": which benchmark, with which parameters (as command-line text).
struct run_file_entry {
  const benchmark* bench = nullptr;
  param_values params; ///< only what the file sets; defaults are filled in when planning
  std::string description;
};

/// The file's "options": each set only when the file names it, by its row of the option table
/// (option_table.hpp), as read_option_value() returns it (a percentage in percent, devices as
/// text).
struct run_file_options {
  nlohmann::json values = nlohmann::json::object();
};

struct run_file {
  std::string name;
  std::string description;
  run_file_options options;
  std::vector<run_file_entry> entries;
  /// Deprecation notes (old spellings still read), for stderr.
  std::vector<std::string> notes;
};

/// Validates `j` against the run-file format and the benchmarks in `catalog`. Throws usage_error
/// naming the key path (e.g. "benchmarks[1].params.n"), the offending value and what was expected.
run_file parse_run_file(const nlohmann::json& j, std::span<const benchmark> catalog);

/// Reads and parses `path`; errors are prefixed with the path (JSON syntax errors with
/// line:column).
run_file load_run_file(const std::string& path, std::span<const benchmark> catalog);

/// Applies the file's options to `opts` and `device_spec`, except those that
/// `given_on_command_line("--min-samples")` says the user set explicitly: the command line wins.
void apply_run_file_options(const run_file_options& file, common_options& opts,
                            std::string& device_spec,
                            const std::function<bool(std::string_view)>& given_on_command_line);

/// Plans every entry (defaults filled in) and concatenates the points in file order. Planning
/// errors are rethrown prefixed with the entry's key path ("benchmarks[2] (augment): ...").
std::vector<planned_point> plan_run_file(const run_file& file, const common_options& opts);

/// Lists planned points for --dry-run: a numbered table, or a JSON array with `json`/others.
void write_plan(std::ostream& os, const run_file& file, const std::vector<planned_point>& points,
                output_format format);

} // namespace gpubench
