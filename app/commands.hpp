#pragma once
// Each subcommand lives in its own file and registers itself here; main only dispatches.
#include "gpubench/engine/options.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/scale/mpi_run.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::app {

/// Shared between main and the subcommands: argv for the report, and the exit code the chosen
/// subcommand's callback decided. Errors are thrown, never exit()ed; main maps them.
struct cli_state {
  std::vector<std::string> argv;
  int exit_code = 0;
  /// What to suggest when no GPU is usable, after the reason ("" ends the message there): the
  /// --cpu-only mode where the command has one.
  std::string no_device_hint;
};

/// What the command line gave for the common options of one subcommand, as CLI11 parsed it; read
/// by finish_common_options() once the subcommand runs.
struct given_options;

/// Adds --device --format --output --warmup ... (design section 2) to `cmd`, bound to `opts`;
/// `device_spec` receives the raw --device text ("0", "0,1" or "all").
/// Only the options `offered` says do something in that subcommand are added. The subcommand
/// keeps what this returns and hands it to finish_common_options().
[[nodiscard]] std::shared_ptr<given_options>
add_common_options(CLI::App& cmd, common_options& opts, std::string& device_spec,
                   const common_option_set& offered = {});
/// Applies what `given` holds to `opts`: the output's format, the measurement options given on
/// the command line (over a run file's), the devices of `device_spec`; validates them, checks
/// --output's folder and notes the options that have no effect.
void finish_common_options(common_options& opts, const given_options& given,
                           const std::string& device_spec);
/// Writes --output, then stdout, in their formats (output.hpp's deliver); returns the exit code.
int emit_report(const run_report& report, const common_options& opts);
/// The --output file's format: --output-format's text when given (usage_error if it is not a
/// format), else the format the path's extension names (.json .csv .md .txt), else
/// `explicit_format` (--format when given on the command line), else json.
output_format output_file_format(const std::string& output_format_text,
                                 std::optional<output_format> explicit_format,
                                 const std::string& output_path);

/// --format, --output and --output-format of the subcommands that re-render saved results
/// (report, compare), as typed; add_output_options() binds them.
struct output_choice {
  std::string format = "table";
  std::string output_path;
  std::string output_format;
  CLI::Option* format_option = nullptr;
  CLI::Option* output_option = nullptr;
};
/// Adds --format (help: `format_help`), --output (writing `what` to FILE) and --output-format.
void add_output_options(CLI::App& cmd, output_choice& choice, const char* format_help,
                        const char* what);
/// The stdout and --output formats of `choice`; usage_error when --format is not one of
/// `formats_listed` (as the message lists them) or --output-format is not a format, and when
/// --output names no usable path.
struct output_formats {
  output_format out = output_format::table;
  output_format file = output_format::json;
};
output_formats resolve_output_options(const output_choice& choice, const char* formats_listed);

/// Multi-GPU: runs the plan alone, on every device at once (--concurrent) or as one
/// rank of an MPI job (rank 0 alone emits), then emits; returns the exit code. `job` is
/// current_mpi_job().
/// `emit`, when given, takes the finished report in place of emit_report (and no journal is kept:
/// `check` writes its own formats and is short enough to run again).
using report_emitter = std::function<int(run_report&)>;
int run_and_emit(const std::vector<planned_point>& points, const common_options& opts,
                 const std::vector<std::string>& argv, mpi_job* job, bool needs_gpu,
                 const report_emitter& emit = {});

/// Throws usage_error when --resume is given where it cannot work: without --output FILE, with
/// --concurrent, under MPI.
void check_resume(const common_options& opts, bool under_mpi);
/// One process on its own: runs the plan with the journal of --output (FILE.journal, locked
/// while it runs; --resume keeps the points it holds), then emits; returns the exit code.
int run_journaled(const std::vector<planned_point>& points, const common_options& opts,
                  const std::vector<std::string>& argv);

void add_benchmark_commands(CLI::App& app, cli_state& state); // vecadd, augment, pipeline
void add_devices_command(CLI::App& app, cli_state& state);
void add_run_command(CLI::App& app, cli_state& state);
void add_rerun_command(CLI::App& app, cli_state& state);
void add_compare_command(CLI::App& app, cli_state& state);
void add_report_command(CLI::App& app, cli_state& state);
void add_check_command(CLI::App& app, cli_state& state);
// Delivery: doctor, completions and the hidden man page writer.
void add_doctor_command(CLI::App& app, cli_state& state);
void add_completions_command(CLI::App& app, cli_state& state);

/// Makes a mistyped subcommand or option answer with "did you mean ...?".
void install_suggestions(CLI::App& app);
/// --help wrapped to 100 columns; set on the top-level app before its subcommands are added
/// (they inherit it).
void install_help_format(CLI::App& app);

/// The exit-code table shown at the end of every --help.
extern const char* const exit_codes_help;
/// Refuses an option given an empty value (an unset shell variable), as --output "" is refused.
extern const CLI::Validator non_empty_text;

} // namespace gpubench::app
