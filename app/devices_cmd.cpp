// `gpubench devices`: every GPU's properties, and with --measure its practical copy peaks.
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/context.hpp"
#include "gpubench/engine/env.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <sstream>

namespace gpubench::app {

namespace {

void write_devices_table(std::ostream& os, const std::vector<device_record>& devices) {
  os << fmt::format(
      "{:>3}  {:<24} {:>4} {:>5} {:>10} {:>8} {:>6} {:>9} {:>11} {:>11} {:>10} {:>10}\n", "id",
      "name", "cc", "SMs", "memory", "L2", "bus", "mem clk", "peak (2xclkxbus)", "D2D copy",
      "H2D pin", "D2H pin");
  for (const auto& d : devices) {
    const auto& i = d.info;
    const auto opt = [](const std::optional<double>& v) {
      return v ? format_bytes_per_s(*v) : std::string("-");
    };
    os << fmt::format(
        "{:>3}  {:<24} {:>4} {:>5} {:>10} {:>8} {:>4}b {:>5} MHz {:>16} {:>11} {:>10} {:>10}\n",
        i.id, i.name, fmt::format("{}.{}", i.cc_major, i.cc_minor), i.sms,
        format_bytes(static_cast<double>(i.memory_bytes)), format_bytes(i.l2_bytes),
        i.bus_width_bits, i.mem_clock_khz / 1000, format_bytes_per_s(i.peak_bytes_per_s()),
        opt(d.d2d_bytes_per_s), opt(d.h2d_bytes_per_s), opt(d.d2h_bytes_per_s));
  }
}

} // namespace

void add_devices_command(CLI::App& app, cli_state& state) {
  struct devices_command {
    common_options opts;
    std::string device_spec;
    std::shared_ptr<given_options> given;
    bool measure = false;
  };
  static devices_command cmd;
  CLI::App* sub = app.add_subcommand("devices", "list GPUs and their properties");
  sub->footer(
      std::string("Examples:\n  gpubench devices\n  gpubench devices --measure --format json\n\n") +
      exit_codes_help);
  // Only --device, --format and --output: nothing here samples, draws inputs or runs on the CPU.
  cmd.given = add_common_options(*sub, cmd.opts, cmd.device_spec,
                                 common_option_set{.measurement = false,
                                                   .inputs = false,
                                                   .cpu_threads = false,
                                                   .cpu_only = false,
                                                   .logging = false});
  cmd.device_spec = "all";
  sub->get_option("--device")->default_str("all"); // the default used here, not the shared "0"
  sub->add_flag(
      "--measure", cmd.measure,
      "also measure D2D copy and pinned H2D/D2H bandwidth (the denominators of % of peak)");
  sub->callback([&state] {
    finish_common_options(cmd.opts, *cmd.given, cmd.device_spec);
    for (const int d : cmd.opts.devices) cuda::require_device(d);
    run_context ctx(cmd.opts);
    run_report report;
    report.meta = collect_meta(state.argv);
    for (const int d : cmd.opts.devices) {
      if (cmd.measure)
        ctx.device_with_peaks(d, true);
      else
        ctx.device(d);
    }
    report.devices = ctx.devices_used();
    // The devices' own table in place of the (empty) result table; other formats as any report.
    const auto render = [&report](output_format f) {
      std::ostringstream text;
      if (f == output_format::table)
        write_devices_table(text, report.devices);
      else
        write_report(text, report, f);
      return text.str();
    };
    deliver(
        cmd.opts.output_path, [&] { return render(cmd.opts.file_format); },
        [&] { return render(cmd.opts.format); });
    state.exit_code = exit_code::success;
  });
}

} // namespace gpubench::app
