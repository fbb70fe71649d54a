#pragma once
// Options every measuring subcommand shares (design section 2). Filled by the CLI or a run file.
#include "gpubench/measure.hpp"
#include "gpubench/report.hpp"

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
  bool verify = true;
  int verbosity = 1; ///< 0 quiet, 1 normal, 2 verbose
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
