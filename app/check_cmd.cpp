// gpubench check: a short suite per GPU judged against references, its peers and its own state
// (docs/check.md); the verdict as an exit code, a table, JSON, JUnit or Prometheus text.
#include "commands.hpp"

#include "gpubench/check/check_report.hpp"
#include "gpubench/check/check_suite.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/results/output.hpp"
#include "gpubench/results/result_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace gpubench::app {
namespace {

struct check_args {
  common_options opts;
  std::string device_spec;
  std::shared_ptr<given_options> given;
  bool quick = false;
  bool strict = false;
  std::string reference_path;
  std::string save_reference_path;
  std::vector<std::string> from;
  std::string format = "table";
  std::string output_path;
  std::string output_format;
};

const char* const check_examples = R"(
Examples:
  gpubench check                                   every GPU, the default suite
  gpubench check --quick --device 0                one GPU, the short suite
  gpubench check --format junit --output check.xml     for CI
  gpubench check --format prometheus --output /var/lib/node_exporter/gpubench.prom
  gpubench check --save-reference ours.json        a reference from this known-good node
  gpubench check --reference ours.json --strict    held to it; WARN fails too
  gpubench check --from old.json --reference ours.json     an old run judged again
  mpirun -np 8 gpubench check                      a fleet: one rank per GPU, outliers named
)";

/// The stdout and file formats: --format; the file's from --output-format, else its extension,
/// else json.
std::pair<check_format, check_format> resolve_formats(const check_args& a) {
  const auto out = parse_check_format(a.format);
  if (!out)
    throw usage_error(
        fmt::format("--format: '{}' is not one of table, json, junit, prometheus", clip(a.format)));
  check_format file = check_format::json;
  if (!a.output_format.empty()) {
    const auto f = parse_check_format(a.output_format);
    if (!f)
      throw usage_error(fmt::format("--output-format: '{}' is not one of table, json, junit, "
                                    "prometheus",
                                    clip(a.output_format)));
    file = *f;
  } else if (const auto by_ext = check_format_of_path(a.output_path)) {
    file = *by_ext;
  }
  return {*out, file};
}

void write_reference(const std::string& path, const run_report& r) {
  const reference_set ref = build_reference(r);
  if (ref.models.empty())
    throw usage_error(fmt::format("--save-reference {}: the results hold no measured check to "
                                  "build a reference from",
                                  clip(path)));
  write_file_atomically(path, to_json(ref).dump(2) + "\n", "--save-reference");
  std::fprintf(stderr, "gpubench: wrote the reference of %zu model(s) to %s\n", ref.models.size(),
               printable_message(path).c_str());
}

/// --save-reference with --from: the reference from saved check results, nothing measured.
int reference_from_files(const check_args& a) {
  std::vector<run_report> reports;
  for (const auto& p : a.from) reports.push_back(load_result_file(p).report);
  const run_report merged = merge_reports(reports);
  if (!is_check_report(merged))
    throw usage_error("--from: the files hold no result of gpubench check");
  write_reference(a.save_reference_path, merged);
  return exit_code::success;
}

int emit_check(run_report& r, const check_args& a, std::pair<check_format, check_format> formats) {
  for (const auto& x : r.results)
    if (x.status == result_status::skipped || x.status == result_status::error)
      std::fprintf(
          stderr, "gpubench: %s\n",
          printable_message(fmt::format("check point {}: {}", to_string(x.status), x.reason))
              .c_str());
  finish_checks(r);
  const auto summary = summarize_checks(r);
  if (!a.save_reference_path.empty()) write_reference(a.save_reference_path, r);
  const std::size_t width = std::max<std::size_t>(output_width(), 100);
  deliver(
      a.output_path, [&] { return render_check(r, formats.second, a.strict, 120); },
      [&] { return render_check(r, formats.first, a.strict, width); });
  return std::max(check_exit_code(summary, a.strict), exit_code_for(r));
}

/// --from without --save-reference: one saved check judged again against --reference (else the
/// shipped references), measuring nothing.
int judge_again(const check_args& a, std::pair<check_format, check_format> formats) {
  if (a.from.size() != 1)
    throw usage_error(fmt::format("--from: {} files given; a saved check is judged again one file "
                                  "at a time (several files build a reference with "
                                  "--save-reference)",
                                  a.from.size()));
  if (a.quick || a.opts.concurrent)
    throw usage_error(fmt::format("{} does not apply with --from: nothing is measured",
                                  a.quick ? "--quick" : "--concurrent"));
  run_report r = load_result_file(a.from.front()).report;
  if (!is_check_report(r))
    throw usage_error(
        fmt::format("--from {}: the file holds no result of gpubench check", clip(a.from.front())));
  reference_set references;
  if (!a.reference_path.empty()) references = load_reference_file(a.reference_path);
  rejudge_checks(r, references);
  return emit_check(r, a, formats);
}

void run_check(check_args& a, cli_state& state, CLI::App* cmd) {
  defer_interrupts();
  const auto formats = resolve_formats(a);
  std::vector<named_input> inputs;
  if (!a.reference_path.empty()) inputs.push_back({"reference file", a.reference_path});
  for (const auto& p : a.from) inputs.push_back({"result file", p});
  if (!a.output_path.empty()) {
    check_output_path(a.output_path);
    check_output_is_not_an_input(a.output_path, "--output", inputs);
  }
  if (!a.save_reference_path.empty()) {
    check_output_path(a.save_reference_path, "--save-reference");
    check_output_is_not_an_input(a.save_reference_path, "--save-reference", inputs);
  }
  if (!a.from.empty()) {
    state.exit_code =
        a.save_reference_path.empty() ? judge_again(a, formats) : reference_from_files(a);
    return;
  }
  auto setup = std::make_shared<check_setup>();
  setup->quick = a.quick;
  if (!a.reference_path.empty()) setup->references = load_reference_file(a.reference_path);
  state.no_device_hint = ": gpubench check judges GPUs and needs one.";
  finish_common_options(a.opts, *a.given, a.device_spec);
  a.opts.output_path = a.output_path;
  a.opts.cpu_rows = false; // the GPU alone is judged
  mpi_job* job = current_mpi_job();
  if (job != nullptr)
    pick_rank_device(*job, a.opts, {a.opts.sync_timeout, cmd->count("--device") > 0});
  static benchmark bench; // planned points point at it until the process ends
  bench = make_check_benchmark(setup);
  const auto points = plan_points(
      bench, {{"check", fmt::format("{}", fmt::join(check_points(a.quick), ","))}}, a.opts);
  if (job == nullptr)
    for (const int d : a.opts.devices) cuda::require_device(d);
  state.exit_code =
      run_and_emit(points, a.opts, state.argv, job, true,
                   [&a, formats](run_report& r) { return emit_check(r, a, formats); });
}

} // namespace

void add_check_command(CLI::App& app, cli_state& state) {
  auto a = std::make_shared<check_args>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Is this GPU as fast as it should be: a short suite per GPU, a verdict against "
               "references and peers (docs/check.md)");
  common_option_set offered;
  offered.measurement = false;
  offered.inputs = false;
  offered.cpu_only = false;
  offered.output = false;
  a->given = add_common_options(*cmd, a->opts, a->device_spec, offered);
  a->device_spec = "all";
  cmd->get_option("--device")->default_str("all");
  cmd->add_flag("--concurrent", a->opts.concurrent,
                "with several GPUs: run the suite on all of them at once (each GPU's figures "
                "then include what sharing the host costs)");
  cmd->add_flag("--quick", a->quick, "the short suite: state, HBM, PCIe, launch, FP32");
  cmd->add_flag("--strict", a->strict, "WARN fails too (exit 1)");
  cmd->add_option("--reference", a->reference_path,
                  "hold the figures to this reference file (from --save-reference) instead of "
                  "the shipped ones")
      ->type_name("FILE")
      ->check(non_empty_text);
  cmd->add_option("--save-reference", a->save_reference_path,
                  "write a reference built from this run (or from --from files) to FILE")
      ->type_name("FILE")
      ->check(non_empty_text);
  cmd->add_option("--from", a->from,
                  "measure nothing: judge this saved check result again (against --reference, "
                  "else the shipped references), or with --save-reference build a reference "
                  "from these results")
      ->type_name("FILE");
  cmd->add_option("--format", a->format, "stdout format")
      ->type_name("{table|json|junit|prometheus}")
      ->capture_default_str();
  cmd->add_option("--output", a->output_path,
                  "also write the result to FILE (atomic; format from --output-format, else "
                  "FILE's extension .json .xml .prom .txt, else JSON; - for stdout)")
      ->type_name("FILE");
  cmd->add_option("--output-format", a->output_format,
                  "format of the --output file (default: from FILE's extension, else json)")
      ->type_name("{json|table|junit|prometheus}")
      ->check(non_empty_text);
  cmd->footer(std::string(check_examples) + exit_codes_help);
  cmd->callback([a, &state, cmd] { run_check(*a, state, cmd); });
}

} // namespace gpubench::app
