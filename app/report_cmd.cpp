// gpubench report FILE...: re-render saved results without re-running; several files are merged.
#include "commands.hpp"

#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/errors.hpp"
#include "gpubench/results/compare.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <memory>
#include <sstream>

namespace gpubench::app {
namespace {

struct report_args {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output_path;
  std::string output_format;
};

const char* const report_examples = R"(
Examples:
  gpubench report seed.json
  gpubench report seed.json --format md > seed.md
  gpubench report monday.json tuesday.json --format csv --output both.csv
)";

} // namespace

void add_report_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<report_args>();
  CLI::App* cmd = app.add_subcommand("report", "Re-render saved results as table, md, csv or json");
  cmd->add_option("FILE", args->paths, "Result files (JSON from --output); several are merged")
      ->required();
  auto* format_option =
      cmd->add_option("--format", args->format, "Output: table (default), md, csv or json");
  auto* output_option =
      cmd->add_option("--output", args->output_path,
                      "Also write the (merged) result to FILE (format: --output-format, else the "
                      "extension .json .csv .md .txt, else --format, else JSON; - for stdout)");
  cmd->add_option("--output-format", args->output_format,
                  "Format of the --output file: json, table, csv, md");
  cmd->footer(std::string(report_examples) + exit_codes_help);

  cmd->callback([args, format_option, output_option, &state] {
    const auto format = parse_output_format(args->format);
    if (!format) {
      throw usage_error(fmt::format("--format: '{}' is not a format; expected table, json, csv "
                                    "or md",
                                    args->format));
    }
    const output_format file_format = output_file_format(
        args->output_format, format_option->count() > 0 ? format : std::nullopt, args->output_path);
    if (output_option->count() > 0) check_output_path(args->output_path);
    std::vector<run_report> reports;
    for (const auto& p : args->paths) reports.push_back(load_report(p));
    const run_report merged = merge_reports(reports);
    const auto render = [&merged](output_format f) {
      std::ostringstream text;
      write_report(text, merged, f, summary_tables());
      return text.str();
    };
    deliver(
        args->output_path, [&] { return render(file_format); }, [&] { return render(*format); });
    state.exit_code = exit_code::success;
  });
}

} // namespace gpubench::app
