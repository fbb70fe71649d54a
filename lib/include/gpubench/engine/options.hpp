#pragma once
// Options every measuring subcommand shares (design section 2). Filled by the CLI or a run file.
#include "gpubench/engine/measure.hpp"
#include "gpubench/report/report.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

struct common_options {
  std::vector<int> devices{0}; ///< resolved list (--device all expands to every device)
  output_format format = output_format::table;
  std::string output_path; ///< also write the JSON here (atomically)
  measure_options measure;
  std::uint64_t seed = 42;
  int cpu_threads = 0; ///< 0: all hardware threads
  bool cpu_only = false;
  /// false: GPU points measure no CPU baseline row (`gpubench check` judges the GPU alone); the
  /// CPU still computes what verification compares against.
  bool cpu_rows = true;
  bool verify = true;
  int verbosity = 1; ///< 0 quiet, 1 normal, 2 verbose
  // --output-format (one set of writers): the format of the --output file; from
  // --output-format, else an explicit --format, else json (the complete record).
  output_format file_format = output_format::json;
  // -- launch-free timing, telemetry, energy --
  bool energy = false; ///< --energy: energy per operation of the main rows (energy.hpp)
  // Multi-GPU (docs/multi-gpu.md)
  bool concurrent = false; ///< --concurrent: each point on every selected GPU at once
  /// --sync-timeout: deadline (s) of each barrier between GPU threads or MPI ranks
  double sync_timeout = 600;
  /// --resume: keep the points the journal of --output holds (docs/reliability.md)
  bool resume = false;
};

/// Which of the common options a subcommand offers: only those that do something there. --format
/// and --output are always offered.
struct common_option_set {
  bool device = true;      ///< --device
  bool measurement = true; ///< --warmup, --min-samples, --max-samples, --min-time, --max-noise,
                           ///< --timeout, --warm
  bool inputs = true;      ///< --seed, --no-verify
  bool cpu_threads = true; ///< --cpu-threads
  bool cpu_only = true;    ///< --cpu-only
  bool logging = true;     ///< -q, -v
  bool output = true; ///< --format, --output, --output-format (false: the subcommand has its own)
};

/// Throws usage_error naming the option if a measurement option is out of range.
void validate(const measure_options& m);

/// Checks an integer option's text (decimal digits, an optional sign; no hexadecimal, octal or
/// exponent) and rewrites it in plain decimal. Returns what is wrong, or "" when it is fine.
std::string normalize_integer_text(std::string& text, bool allow_negative,
                                   std::string_view what = "a decimal integer");

/// Checks a number option's text by parse_number's rules (the run files' rules) and rewrites it as
/// the shortest decimal of the same double. Returns what is wrong, or "" when it is fine.
std::string normalize_number_text(std::string& text);

} // namespace gpubench
