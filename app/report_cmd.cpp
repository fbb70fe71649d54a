// gpubench report FILE...: re-render saved results without re-running; several files are merged.
#include "commands.hpp"

#include "gpubench/compare.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/output.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace gpubench::app {
namespace {

struct report_args {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output_path;
};

const char* const report_examples = R"(
Examples:
  gpubench report seed.json
  gpubench report seed.json --format md > seed.md
  gpubench report monday.json tuesday.json --format csv --output both.json
)";

} // namespace

void add_report_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<report_args>();
  CLI::App* cmd = app.add_subcommand("report", "Re-render saved results as table, md, csv or json");
  cmd->add_option("FILE", args->paths, "Result files (JSON from --output); several are merged")
      ->required();
  cmd->add_option("--format", args->format, "Output: table (default), md, csv or json");
  cmd->add_option("--output", args->output_path, "Also write the (merged) JSON result to FILE");
  cmd->footer(std::string(report_examples) + exit_codes_help);

  cmd->callback([args, &state] {
    const auto format = parse_output_format(args->format);
    if (!format) {
      throw usage_error(fmt::format("--format: '{}' is not a format; expected table, json, csv "
                                    "or md",
                                    args->format));
    }
    if (!args->output_path.empty()) check_output_path(args->output_path);
    std::vector<run_report> reports;
    for (const auto& p : args->paths) reports.push_back(load_report(p));
    const run_report merged = merge_reports(reports);
    write_report(std::cout, merged, *format);
    if (!args->output_path.empty()) {
      write_file_atomically(args->output_path, to_json(merged).dump(2) + "\n");
    }
    state.exit_code = exit_code::success;
  });
}

} // namespace gpubench::app
