// gpubench compare BASE NEW: the regression gate (docs/compare.md).
#include "commands.hpp"

#include "gpubench/compare.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/output.hpp"

#include <fmt/format.h>

#include <memory>
#include <sstream>

namespace gpubench::app {
namespace {

struct compare_args {
  std::string base_path;
  std::string new_path;
  std::string threshold = "5%";
  double alpha = 0.05;
  bool allow_device_mismatch = false;
  std::string clock;
  std::string format = "table";
  std::string output_path;
  std::string output_format;
};

const char* const compare_help = R"(
Each measurement present in both files is judged from its raw samples: a two-sided Mann-Whitney U
test (normal approximation with tie correction) decides whether the runs differ, and the change of
the median decides whether the difference matters:
  same          |change| <= threshold
  faster/slower beyond the threshold and p < alpha
  inconclusive  beyond the threshold but not significant, or fewer than 2 samples on a side
Exit code 1 only when some measurement is "slower"; a speedup never fails. See docs/compare.md.

Examples:
  gpubench compare baseline.json new.json
  gpubench compare baseline.json new.json --threshold 10% --format md
  gpubench compare a100.json h200.json --allow-device-mismatch
  gpubench compare baseline.json new.json --clock gpu      # ignore CPU-reference timings
)";

} // namespace

void add_compare_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<compare_args>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two saved results: the regression gate");
  cmd->add_option("BASE", args->base_path, "Baseline result (JSON from --output)")->required();
  cmd->add_option("NEW", args->new_path, "Result to judge against the baseline")->required();
  cmd->add_option("--threshold", args->threshold,
                  "Change of the median that matters, in percent (default 5%)");
  cmd->add_option("--alpha", args->alpha, "Significance level of the rank test (default 0.05)");
  cmd->add_flag("--allow-device-mismatch", args->allow_device_mismatch,
                "Compare results measured on different GPU models");
  cmd->add_option("--clock", args->clock,
                  "Judge only measurements on this clock: gpu or host (default: both)");
  auto* format_option =
      cmd->add_option("--format", args->format, "Output: table (default), md, json or csv");
  auto* output_option =
      cmd->add_option("--output", args->output_path,
                      "Also write the comparison to FILE (format: --output-format, else the "
                      "extension .json .csv .md .txt, else --format, else JSON; - for stdout)");
  cmd->add_option("--output-format", args->output_format,
                  "Format of the --output file: json, table, csv, md");
  cmd->footer(std::string(compare_help) + exit_codes_help);

  cmd->callback([args, format_option, output_option, &state] {
    const auto format = parse_output_format(args->format);
    if (!format) {
      throw usage_error(fmt::format("--format: '{}' is not a format; expected table, md, json "
                                    "or csv",
                                    args->format));
    }
    if (!(args->alpha > 0 && args->alpha < 1)) {
      throw usage_error(fmt::format("--alpha: {} is not a probability in (0, 1)", args->alpha));
    }
    compare_options opts;
    opts.threshold = parse_percentage(args->threshold, "--threshold");
    opts.alpha = args->alpha;
    opts.allow_device_mismatch = args->allow_device_mismatch;
    if (!args->clock.empty() && args->clock != "gpu" && args->clock != "host")
      throw usage_error(fmt::format("--clock: '{}' is not gpu or host", args->clock));
    opts.clock = args->clock;
    const output_format file_format = output_file_format(
        args->output_format, format_option->count() > 0 ? format : std::nullopt, args->output_path);
    if (output_option->count() > 0) check_output_path(args->output_path);

    const run_report base = load_report(args->base_path);
    const run_report candidate = load_report(args->new_path);
    const comparison c = compare_reports(base, candidate, opts);
    const auto render = [&c](output_format f) {
      std::ostringstream text;
      write_comparison(text, c, f);
      return text.str();
    };
    deliver(
        args->output_path, [&] { return render(file_format); }, [&] { return render(*format); });
    state.exit_code = exit_code_for(c);
  });
}

} // namespace gpubench::app
