// gpubench compare BASE NEW: the regression gate (docs/compare.md).
#include "commands.hpp"

#include "gpubench/multi_gpu_report.hpp"

#include "gpubench/compare.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/output.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace gpubench::app {
namespace {

struct compare_args {
  std::string base_path;
  std::string new_path;
  std::string threshold = "5%";
  double alpha = 0.05;
  bool allow_device_mismatch = false;
  std::string clock;
  bool force = false; ///< multi-GPU (issue 16): compare jobs of different shapes
  std::string format = "table";
  std::string output_path;
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
  cmd->add_option("--format", args->format, "Output: table (default), md, json or csv");
  cmd->add_option("--output", args->output_path, "Also write the comparison as JSON to FILE");
  cmd->add_flag("--force", args->force,
                "Compare multi-GPU jobs of different shapes (rank count, nodes, GPUs)");
  cmd->footer(std::string(compare_help) + exit_codes_help);

  cmd->callback([args, &state] {
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
    if (!args->output_path.empty()) check_output_path(args->output_path);

    const run_report base = load_report(args->base_path);
    const run_report candidate = load_report(args->new_path);
    // Multi-GPU (issue 16): a 4-rank job is not a regression of an 8-rank one.
    if (const auto why = job_shape_mismatch(base, candidate); why && !args->force)
      throw usage_error(*why);
    const comparison c = compare_reports(base, candidate, opts);
    write_comparison(std::cout, c, *format);
    if (!args->output_path.empty()) {
      write_file_atomically(args->output_path, to_json(c).dump(2) + "\n");
    }
    state.exit_code = exit_code_for(c);
  });
}

} // namespace gpubench::app
