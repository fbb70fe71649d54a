// gpubench report FILE...: re-render saved results without re-running; several files are merged.
#include "commands.hpp"
#include "html_page.hpp"

#include "gpubench/check/check_report.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/gate/compare.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/registry/registry.hpp"
#include "gpubench/report/text_table.hpp"
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
  gpubench report seed.json --format html --output seed.html
  gpubench report ci/*.json --format html --output history.html   (a history: one file a run)
)";

bool is_check_word(const std::string& s) { return s == "junit" || s == "prometheus"; }

/// A saved `gpubench check` result in junit or prometheus (on stdout or in --output, by
/// --output-format or the extension .xml/.prom), and its verdict table for --format table: true
/// when the files were rendered so.
bool render_check_formats(const report_args& args) {
  const auto& o = args.output;
  const bool by_ext = o.output_format.empty() &&
                      (o.output_path.ends_with(".xml") || o.output_path.ends_with(".prom"));
  if (!is_check_word(o.format) && !is_check_word(o.output_format) && !by_ext) return false;
  std::vector<run_report> reports;
  for (const auto& p : args.paths) reports.push_back(load_result_file(p).report);
  const run_report merged = merge_reports(reports);
  if (!is_check_report(merged))
    throw usage_error(fmt::format("--format {}: junit and prometheus are the formats of gpubench "
                                  "check's results; these files hold none",
                                  is_check_word(o.format) ? o.format : o.output_format));
  const auto out = parse_check_format(o.format);
  if (!out)
    throw usage_error(fmt::format("--format: '{}' is not one of table, json, junit, prometheus "
                                  "(the formats of a check result)",
                                  clip(o.format)));
  auto file = check_format_of_path(o.output_path).value_or(check_format::json);
  if (!o.output_format.empty()) {
    const auto f = parse_check_format(o.output_format);
    if (!f)
      throw usage_error(fmt::format("--output-format: '{}' is not one of table, json, junit, "
                                    "prometheus",
                                    clip(o.output_format)));
    file = *f;
  }
  if (!o.output_path.empty()) check_output_path(o.output_path);
  deliver(
      o.output_path, [&] { return render_check(merged, file, false, 120); },
      [&] { return render_check(merged, *out, false, output_width()); });
  return true;
}

} // namespace

void add_report_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<report_args>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Re-render saved results as table, md, csv, json or an HTML page");
  cmd->add_option("FILE", args->paths, "Result files (JSON from --output); several are merged")
      ->type_name("FILE")
      ->required();
  add_output_options(*cmd, args->output,
                     "Output: table (default), md, csv, json, or html (a page, with --output); "
                     "for gpubench check's results also junit and prometheus",
                     "the (merged) result");
  cmd->footer(std::string(report_examples) + exit_codes_help);

  cmd->callback([args, &state] {
    if (render_check_formats(*args)) {
      state.exit_code = exit_code::success;
      return;
    }
    const auto html = html_output(args->output);
    const output_formats formats =
        resolve_output_options(html ? html->rest : args->output, "table, json, csv, md or html");
    // Nothing is read yet: a file given twice would list every result twice, and an --output
    // that is an input would replace it.
    if (const auto dup = first_duplicate(args->paths)) {
      const auto& [i, j] = *dup;
      throw usage_error(
          args->paths[i] == args->paths[j]
              ? fmt::format("report: '{}' is given twice; every result would be listed twice. "
                            "Give each file once",
                            clip(args->paths[i], 200))
              : fmt::format("report: '{}' and '{}' are the same file; every result would be "
                            "listed twice. Give each file once",
                            clip(args->paths[i], 200), clip(args->paths[j], 200)));
    }
    std::vector<named_input> inputs;
    for (const auto& p : args->paths) inputs.push_back({"result file", p});
    check_output_is_not_an_input(args->output.output_path, "--output", inputs);
    std::vector<result_file> files;
    std::vector<run_report> reports;
    for (const auto& p : args->paths) {
      files.push_back(load_result_file(p));
      reports.push_back(files.back().report);
    }
    const run_report merged = merge_reports(reports);
    const auto render = [&merged](output_format f) {
      std::ostringstream text;
      write_report(text, merged, f, summary_tables());
      // A check result's verdicts after its rows (docs/check.md).
      if (f == output_format::table && is_check_report(merged))
        text << '\n' << render_check(merged, check_format::table, false, output_width());
      return text.str();
    };
    if (html) {
      // One file: the run's page; several: a history (grouped by configuration and GPU).
      html_job job;
      job.kind = args->paths.size() == 1 ? "run" : "history";
      job.files = args->paths;
      if (job.kind == "history") job.history_json = history_comparisons(files).dump();
      {
        const output_width_scope page_width(120); // a page, not this terminal
        if (args->paths.size() == 1) job.terminal = render(output_format::table);
      }
      std::string page = render_html_page(job);
      deliver(
          html->path, [&] { return page; },
          [&] { return html->text_to_stdout ? render(formats.out) : std::string(); });
      state.exit_code = exit_code::success;
      return;
    }
    deliver(
        args->output.output_path, [&] { return render(formats.file); },
        [&] { return render(formats.out); });
    state.exit_code = exit_code::success;
  });
}

} // namespace gpubench::app
