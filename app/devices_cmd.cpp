// `gpubench devices`: every GPU's properties, and with --measure its practical copy peaks and its
// roofs (the roofline's memory-bound and compute-bound points, gemm's tensor-core product).
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/context.hpp"
#include "gpubench/engine/env.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/registry/registry.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <sstream>

namespace gpubench::app {

namespace {

using nlohmann::json;

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

/// The points --measure runs for the roofs: what `gpubench roofline` and `gpubench gemm` measure
/// at these parameters (docs/roofline.md), with their verification.
struct roof_point {
  const char* column;
  const char* benchmark;
  param_values values;
};

const std::vector<roof_point>& roof_points() {
  static const std::vector<roof_point> points{
      {"memory", "roofline", {{"dtype", "f32"}, {"intensity", "0.0625"}}},
      {"f32 FMA", "roofline", {{"dtype", "f32"}, {"intensity", "1024"}}},
      {"f64 FMA", "roofline", {{"dtype", "f64"}, {"intensity", "256"}}},
      {"f16 FMA", "roofline", {{"dtype", "f16"}, {"intensity", "1024"}}},
      {"bf16 tensor", "gemm", {{"m", "8192"}, {"n", "8192"}, {"k", "8192"}, {"dtype", "bf16"}}},
  };
  return points;
}

/// One roof point on `device`, completed as the runner completes a point; a library it needs that
/// is missing (cuBLASLt) makes it skipped with the reason.
result measure_roof(const roof_point& p, int device, run_context& ctx) {
  result r;
  try {
    r = run_benchmark_point(p.benchmark, p.values, device, ctx);
    complete_point(find_benchmark(p.benchmark)->after_point, r, ctx, device);
  } catch (const cuda::no_device_error& e) {
    r.status = result_status::skipped;
    r.reason = e.what();
    r.params = json(p.values);
  }
  r.benchmark = p.benchmark;
  r.device = device;
  return r;
}

/// A roof cell: the kernel row's rate (bytes/s for the memory roof, FLOP/s otherwise) and its
/// share of the theoretical figure.
std::string roof_cell(const result& r, bool memory) {
  const auto* m = r.find("kernel");
  if (r.status != result_status::ok || m == nullptr || m->stats.median <= 0)
    return r.status == result_status::skipped ? "skipped" : "-";
  const double rate = (memory ? m->work.bytes : m->work.flops) / m->stats.median;
  std::string cell = memory ? format_bytes_per_s(rate) : format_rate(rate, "FLOP");
  double theoretical = 0;
  if (memory)
    theoretical = r.derived.value("theoretical_bytes_per_s", 0.0);
  else if (const auto it = r.derived.find("theoretical_flops_per_s");
           it != r.derived.end() && it->is_number())
    theoretical = it->get<double>();
  else if (const auto jt = r.derived.find("kernel_peak_flops_per_s");
           jt != r.derived.end() && jt->is_number())
    theoretical = jt->get<double>();
  if (theoretical > 0) cell += fmt::format(" ({:.1f}%)", 100 * rate / theoretical);
  return cell;
}

void write_roofs_table(std::ostream& os, const std::vector<result>& roofs) {
  if (roofs.empty()) return;
  os << "\nroofs (% of the theoretical figure; docs/roofline.md):\n" << fmt::format("{:>3}", "id");
  for (const auto& p : roof_points()) os << fmt::format("  {:>20}", p.column);
  os << '\n';
  const std::size_t per_device = roof_points().size();
  for (std::size_t i = 0; i + per_device <= roofs.size(); i += per_device) {
    os << fmt::format("{:>3}", roofs[i].device);
    for (std::size_t k = 0; k < per_device; ++k)
      os << fmt::format("  {:>20}", roof_cell(roofs[i + k], k == 0));
    os << '\n';
  }
  for (const auto& r : roofs)
    if (r.status != result_status::ok)
      os << fmt::format("  GPU {} {}: {}: {}\n", r.device, r.benchmark, to_string(r.status),
                        r.reason);
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
      "also measure D2D copy and pinned H2D/D2H bandwidth (the denominators of % of peak) and the "
      "roofs: memory, f32, f64 and f16 FMA (gpubench roofline's points), bf16 tensor cores "
      "(gpubench gemm 8192^3)");
  sub->callback([&state] {
    finish_common_options(cmd.opts, *cmd.given, cmd.device_spec);
    for (const int d : cmd.opts.devices) cuda::require_device(d);
    run_context ctx(cmd.opts);
    run_report report;
    report.meta = collect_meta(state.argv);
    cmd.opts.cpu_rows = false; // the roofs are the GPU's; gemm's OpenBLAS row is not one
    for (const int d : cmd.opts.devices) {
      if (!cmd.measure) {
        ctx.device(d);
        continue;
      }
      ctx.device_with_peaks(d, true);
      for (const auto& p : roof_points()) report.results.push_back(measure_roof(p, d, ctx));
    }
    report.devices = ctx.devices_used();
    // The devices' own table in place of the (empty) result table; other formats as any report.
    const auto render = [&report](output_format f) {
      std::ostringstream text;
      if (f == output_format::table) {
        write_devices_table(text, report.devices);
        write_roofs_table(text, report.results);
      } else
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
