// One subcommand per registered benchmark: its parameters become options, and the shared runner
// does the rest.
#include "commands.hpp"

#include "gpubench/cuda/error.hpp"
#include "gpubench/runner.hpp"

#include <memory>

namespace gpubench::app {

namespace {

struct bench_command {
  const benchmark* bench = nullptr;
  common_options opts;
  std::string device_spec;
  std::map<std::string, std::string> text; ///< one slot per parameter
  std::vector<std::pair<std::string, CLI::Option*>> options;
};

} // namespace

void add_benchmark_commands(CLI::App& app, cli_state& state) {
  static std::vector<std::unique_ptr<bench_command>> commands;
  for (const auto& b : all_benchmarks()) {
    auto& cmd = *commands.emplace_back(std::make_unique<bench_command>());
    cmd.bench = &b;
    CLI::App* sub = app.add_subcommand(b.name, b.summary);
    sub->footer(b.examples + "\n" + exit_codes_help);
    for (const auto& p : b.params) {
      auto* opt = sub->add_option("--" + p.name, cmd.text[p.name],
                                  p.help + (p.sweepable ? " [sweepable]" : ""));
      if (!p.default_value.empty()) opt->default_str(p.default_value);
      cmd.options.emplace_back(p.name, opt);
    }
    add_common_options(*sub, cmd.opts, cmd.device_spec);
    sub->callback([&cmd, &state] {
      state.cpu_only_applies = cmd.bench->supports_cpu_only;
      finish_common_options(cmd.opts, cmd.device_spec);
      param_values values;
      for (const auto& [name, opt] : cmd.options)
        if (opt->count() > 0) values[name] = cmd.text[name];
      const auto points = plan_points(*cmd.bench, values, cmd.opts);
      if (!cmd.opts.cpu_only)
        for (const int d : cmd.opts.devices) cuda::require_device(d);
      run_context ctx(cmd.opts);
      const auto report = execute(points, ctx, state.argv);
      state.exit_code = emit_report(report, cmd.opts);
    });
  }
}

} // namespace gpubench::app
