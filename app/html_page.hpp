#pragma once
// `report` and `compare` with --format html: one self-contained page drawn by the Python module
// gpubench.html_report (docs/architecture.md, "The HTML report").
#include "commands.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpubench::app {

/// Where the page goes, when the options ask for one: `--format html --output F` (the page only;
/// "-" is stdout), `--output-format html --output F` or `--output F.html` (the page to F, and
/// --format's text to stdout as without it).
struct html_plan {
  std::string path;
  bool text_to_stdout = true;
  output_choice rest; ///< the options for the text on stdout, "html" taken out
};

/// The page asked for, if any; usage_error for --format html without --output, and when the
/// output path cannot be written (check_output_path).
std::optional<html_plan> html_output(const output_choice& choice);

/// What the page shows: "run" (one file), "history" (several) or "compare".
struct html_job {
  std::string kind;
  std::vector<std::string> files; ///< run and history
  std::vector<std::string> base;  ///< compare
  std::vector<std::string> fresh; ///< compare: NEW
  std::string terminal;           ///< the terminal rendering, shown at the end of the page
  std::string comparison_json;    ///< compare: the comparison as --format json writes it
  std::string history_json;       ///< history: its groups and comparisons (history_comparisons)
};

/// The page's HTML. usage_error (exit 2, nothing written) when the module or an interpreter is
/// missing, or the module fails (it names the cause on stderr: matplotlib missing, a bad file).
std::string render_html_page(const html_job& job);

} // namespace gpubench::app
