// gpubench rerun RESULT.json: measures again what a result file measured (its benchmarks, points,
// measurement options and seed) and writes a new result.
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/plan_listing.hpp"
#include "gpubench/engine/rerun.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/registry/registry.hpp"
#include "gpubench/results/output.hpp"

#include <memory>
#include <sstream>

namespace gpubench::app {
namespace {

struct rerun_args {
  std::string path;
  bool dry_run = false;
  common_options opts;
  std::string device_spec = "0";
  std::shared_ptr<given_options> given;
};

const char* const rerun_examples = R"(
Examples:
  gpubench rerun baseline.json --output baseline.json
  gpubench rerun published.json --output mine.json && gpubench compare published.json mine.json
  gpubench rerun result.json --dry-run

The file's benchmarks, points, measurement options (meta.options) and seed are used as recorded,
on the devices it ran on; only the output options can be given. --output may name the file
itself: it is read completely before anything runs.
)";

} // namespace

void add_rerun_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<rerun_args>();
  CLI::App* cmd = app.add_subcommand(
      "rerun", "Measure again what a result file measured: its points, options and seed");
  cmd->add_option("RESULT", args->path, "Result file (JSON) written by gpubench")
      ->type_name("PATH")
      ->required();
  cmd->add_flag("--dry-run", args->dry_run, "List every point that would run, run nothing");
  common_option_set offered;
  offered.device = false; // the devices the file records
  offered.measurement = false;
  offered.inputs = false;
  offered.cpu_threads = false;
  offered.cpu_only = false;
  args->given = add_common_options(*cmd, args->opts, args->device_spec, offered);
  cmd->add_flag("--resume", args->opts.resume,
                "continue the rerun that FILE.journal of --output FILE recorded: keep its points, "
                "measure the rest (docs/reliability.md)");
  cmd->footer(std::string(rerun_examples) + exit_codes_help);

  cmd->callback([args, &state] {
    state.no_device_hint.clear(); // a rerun runs where the file ran
    // A signal during this read (a FIFO, /dev/stdin) ends the process at once: nothing measured.
    const run_report source = load_rerun_source(args->path);
    if (!args->dry_run) defer_interrupts();
    apply_recorded_options(source.meta.options, args->opts, args->device_spec);
    // A dry run never touches a GPU, so "all" is not resolved (it would need a device).
    finish_common_options(args->opts, *args->given,
                          args->dry_run && args->device_spec == "all" ? std::string("0")
                                                                      : args->device_spec);
    const auto points = rerun_points(source, args->opts, all_benchmarks());
    check_fault_injection(points);
    if (args->dry_run) {
      std::ostringstream plan;
      write_plan(plan, "rerun", points, args->opts.format);
      write_stdout(plan.str()); // a dry run writes nothing to --output
      state.exit_code = exit_code::success;
      return;
    }
    if (current_mpi_job() != nullptr)
      throw usage_error("rerun does not run under MPI: each rank would repeat every rank's "
                        "points; run the job's original command (meta.argv) instead");
    state.exit_code = run_and_emit(points, args->opts, state.argv, nullptr, true);
  });
}

} // namespace gpubench::app
