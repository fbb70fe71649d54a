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
  output_choice output;
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
  add_output_options(*cmd, args->output, "Output: table (default), md, csv or json",
                     "the (merged) result");
  cmd->footer(std::string(report_examples) + exit_codes_help);

  cmd->callback([args, &state] {
    const output_formats formats = resolve_output_options(args->output, "table, json, csv or md");
    std::vector<run_report> reports;
    for (const auto& p : args->paths) reports.push_back(load_report(p));
    const run_report merged = merge_reports(reports);
    const auto render = [&merged](output_format f) {
      std::ostringstream text;
      write_report(text, merged, f, summary_tables());
      return text.str();
    };
    deliver(
        args->output.output_path, [&] { return render(formats.file); },
        [&] { return render(formats.out); });
    state.exit_code = exit_code::success;
  });
}

} // namespace gpubench::app
