// One subcommand per registered benchmark: its parameter table becomes options (with their types,
// ranges and defaults), and the shared runner does the rest.
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/engine/plan_listing.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/registry/registry.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>

namespace gpubench::app {

namespace {

struct bench_command {
  const benchmark* bench = nullptr;
  common_options opts;
  std::string device_spec;
  std::shared_ptr<given_options> given;
  bool dry_run = false;
  std::map<std::string, std::string> text; ///< one slot per parameter
  std::vector<std::pair<std::string, CLI::Option*>> options;
};

/// The help line of a parameter: its text, range and whether a list sweeps.
std::string help_of(const param_spec& p) {
  std::string h = p.help;
  if (const auto range = param_range_text(p); !range.empty()) h += fmt::format(" ({})", range);
  if (p.sweepable) h += " [sweepable]";
  if (p.gpu_only) h += " [GPU only]";
  return h;
}

} // namespace

void add_benchmark_commands(CLI::App& app, cli_state& state) {
  static std::vector<std::unique_ptr<bench_command>> commands;
  for (const auto& b : all_benchmarks()) {
    auto& cmd = *commands.emplace_back(std::make_unique<bench_command>());
    cmd.bench = &b;
    CLI::App* sub = app.add_subcommand(b.name, b.summary);
    sub->footer(b.examples + "\n" + exit_codes_help);
    for (const auto& p : b.params) {
      auto* opt = sub->add_option("--" + p.name, cmd.text[p.name], help_of(p))
                      ->type_name(param_type_name(p));
      if (!p.default_value.empty()) opt->default_str(p.default_value);
      cmd.options.emplace_back(p.name, opt);
    }
    common_option_set offered;
    offered.cpu_only = b.supports_cpu_only;
    cmd.given = add_common_options(*sub, cmd.opts, cmd.device_spec, offered);
    sub->add_flag("--dry-run", cmd.dry_run,
                  "list every point that would run and the device memory it needs; run nothing");
    sub->callback([&cmd, &state, sub] {
      // Nothing here blocks on input: from now on a signal ends the run with its results written.
      defer_interrupts();
      if (cmd.bench->supports_cpu_only)
        state.no_device_hint = ". Use --cpu-only to run the CPU reference alone.";
      // A dry run never touches a GPU, so "all" is not resolved (it would need a device).
      finish_common_options(cmd.opts, *cmd.given,
                            cmd.dry_run && cmd.device_spec == "all" ? std::string("0")
                                                                    : cmd.device_spec);
      mpi_job* job = current_mpi_job(); // multi-GPU: a rank picks its own GPU
      if (job != nullptr && !cmd.dry_run)
        pick_rank_device(*job, cmd.opts, {cmd.opts.sync_timeout, sub->count("--device") > 0});
      param_values values;
      std::vector<std::string> unused; // GPU-only parameters under --cpu-only: said, not dropped
      for (const auto& [name, opt] : cmd.options) {
        if (opt->count() == 0) continue;
        values[name] = cmd.text[name];
        if (cmd.opts.cpu_only && spec_of(cmd.bench->params, name).gpu_only)
          unused.push_back("--" + name);
      }
      const auto points = plan_points(*cmd.bench, values, cmd.opts);
      check_fault_injection(points);
      // Said once the plan is valid, so that an error stays the only line.
      if (!unused.empty() && cmd.opts.verbosity > 0)
        std::fprintf(stderr, "gpubench: note: %s\n",
                     no_effect_note(unused, "with --cpu-only, which runs no GPU work").c_str());
      if (cmd.dry_run) {
        write_plan(std::cout, cmd.bench->name, points, cmd.opts.format);
        state.exit_code = exit_code::success;
        return;
      }
      if (!cmd.opts.cpu_only && job == nullptr)
        for (const int d : cmd.opts.devices) cuda::require_device(d);
      state.exit_code = run_and_emit(points, cmd.opts, state.argv, job, !cmd.opts.cpu_only);
    });
  }
}

} // namespace gpubench::app
