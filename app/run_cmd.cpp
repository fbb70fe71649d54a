// gpubench run FILE: a run file (docs/run-files.md) planned, run and reported as one invocation.
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/context.hpp"
#include "gpubench/engine/run_file.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/registry/registry.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <sstream>

namespace gpubench::app {
namespace {

struct run_args {
  std::string path;
  bool dry_run = false;
  common_options opts;
  std::string device_spec = "0";
  std::shared_ptr<given_options> given;
};

const char* const run_examples = R"(
Examples:
  gpubench run configs/cpu-only.json
  gpubench run configs/seed-reproduction.json --output seed.json
  gpubench run configs/full-sweep.json --dry-run
  gpubench run configs/ci-smoke.json --format json --max-samples 20

Options given on the command line override the file's "options". The run file format is described
in docs/run-files.md (JSON Schema: docs/schema/run-file.schema.json).
)";

/// --cpu-only runs a run file's CPU references alone, unless a benchmark in it has none: then the
/// hint says which, rather than suggest an option that would fail next.
std::string no_device_hint(const run_file& file) {
  std::vector<std::string> gpu_only;
  for (const auto& e : file.entries)
    if (!e.bench->supports_cpu_only &&
        std::find(gpu_only.begin(), gpu_only.end(), e.bench->name) == gpu_only.end())
      gpu_only.push_back(e.bench->name);
  if (gpu_only.empty()) return ". Use --cpu-only to run the CPU references alone.";
  if (gpu_only.size() == file.entries.size()) return ".";
  return fmt::format(". --cpu-only runs CPU references alone, but {} {} none (a GPU only): use "
                     "a run file without {}",
                     fmt::join(gpu_only, ", "), gpu_only.size() == 1 ? "has" : "have",
                     gpu_only.size() == 1 ? "it" : "them");
}

} // namespace

void add_run_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<run_args>();
  CLI::App* cmd = app.add_subcommand("run", "Run the benchmarks listed in a JSON run file");
  auto* path_arg =
      cmd->add_option("FILE", args->path, "Run file (JSON), e.g. configs/ci-smoke.json");
  path_arg->type_name("PATH")->required();
  cmd->add_flag("--dry-run", args->dry_run, "List every point that would run, run nothing");
  args->given = add_common_options(*cmd, args->opts, args->device_spec);
  cmd->footer(std::string(run_examples) + exit_codes_help);

  cmd->callback([cmd, args, &state] {
    // Before the file is read: `run plan.json --output plan.json` would replace the plan.
    check_output_is_not_an_input(args->opts.output_path, "--output", {{"run file", args->path}});
    // A signal during this read (a FIFO, /dev/stdin) ends the process at once: nothing measured.
    const run_file file = load_run_file(args->path, all_benchmarks());
    state.no_device_hint = no_device_hint(file);
    if (!args->dry_run) defer_interrupts();
    const auto given = [cmd](std::string_view name) {
      const CLI::Option* o = cmd->get_option_no_throw(std::string(name));
      return o != nullptr && o->count() > 0;
    };
    apply_run_file_options(file.options, args->opts, args->device_spec, given);
    // A dry run never touches a GPU, so "all" is not resolved (it would need a device).
    finish_common_options(args->opts, *args->given,
                          args->dry_run && args->device_spec == "all" ? std::string("0")
                                                                      : args->device_spec);
    if (args->opts.verbosity > 0)
      for (const auto& note : file.notes)
        std::cerr << "gpubench: " << printable_message(args->path + ": " + note) << '\n';
    const auto points = plan_run_file(file, args->opts);
    check_fault_injection(points);
    if (args->dry_run) {
      std::ostringstream plan;
      write_plan(plan, file, points, args->opts.format);
      write_stdout(plan.str()); // a dry run writes nothing to --output
      state.exit_code = exit_code::success;
      return;
    }
    mpi_job* job = current_mpi_job(); // multi-GPU: a rank picks its own GPU
    auto points_here = points;
    if (job != nullptr) {
      pick_rank_device(*job, args->opts, {args->opts.sync_timeout, given("--device")});
      points_here = plan_run_file(file, args->opts);
    }
    state.exit_code = run_and_emit(points_here, args->opts, state.argv, job, true);
  });
}

} // namespace gpubench::app
