// gpubench: parse, dispatch, and turn exceptions into messages and documented exit codes.
#include "build_info.hpp"
#include "commands.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/results/output.hpp"
#include "gpubench/scale/mpi_run.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sys/ioctl.h>
#include <unistd.h>

namespace {
/// SIGINT, SIGTERM (CI timeouts, Slurm, `timeout`) and SIGHUP alike. Once measuring has begun the
/// signal is recorded and the run stops after the current sample, writes what it has (marked
/// incomplete) and exits 128 + N. Before that nothing is at stake, and a blocking read (a FIFO
/// whose writer is silent) must not outlive Ctrl-C: remove the temporary file of an atomic write
/// in progress, say so and end now. Only async-signal-safe calls here.
extern "C" void on_signal(int signal) {
  if (gpubench::interrupts_deferred()) {
    gpubench::request_interrupt(signal);
    return;
  }
  gpubench::remove_pending_temp_file();
  const char* name = signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : "SIGINT";
  const char* parts[] = {"gpubench: interrupted (", name, ") before anything was measured\n"};
  for (const char* p : parts)
    if (::write(STDERR_FILENO, p, std::strlen(p)) < 0) break;
  ::_exit(128 + signal);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
  // A closed stdout pipe must be an error gpubench reports (EPIPE, exit 2), not a silent death
  // before --output is written.
  std::signal(SIGPIPE, SIG_IGN);
  // The same for a file-size limit (ulimit -f): the write fails with EFBIG and goes through the
  // write-error path (a message, exit 2, no temporary file left) instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
}

/// Every error message goes to stderr through printable_message: one line (per line of the
/// message), control characters escaped, echoed arguments clipped.
void print_error(const char* prefix, const char* what, const char* suffix = "") {
  std::fprintf(stderr, "Error: %s%s%s\n", prefix, gpubench::printable_message(what).c_str(),
               suffix);
}

/// The columns terminal output fits (tables fold, notes wrap, the progress line is cut): COLUMNS
/// when it holds a number from 40 up (a shell that exports it, a test), else the width of the
/// terminal that stdout or stderr is, else 120 (a file, a pipe, a CI log).
std::size_t terminal_columns() {
  if (const char* columns = gpubench::process_environment().find("COLUMNS");
      columns != nullptr && *columns != '\0') {
    char* end = nullptr;
    const long value = std::strtol(columns, &end, 10);
    if (*end == '\0' && value >= 40 && value <= 100000) return static_cast<std::size_t>(value);
  }
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    winsize ws{};
    if (::isatty(fd) != 0 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
      return std::max<std::size_t>(ws.ws_col, 40);
  }
  return 120;
}

int dispatch(int argc, char** argv) {
  using namespace gpubench;
  set_output_width(terminal_columns());
  app::cli_state state{std::vector<std::string>(argv, argv + argc), 0, {}};
  CLI::App cli{"gpubench: GPU vs CPU benchmarks, measured, verified and reported", "gpubench"};
  try {
    cli.set_version_flag("--version", app::version_text());
    cli.require_subcommand(1);
    cli.footer(std::string(table_legend_help) + app::exit_codes_help);
    app::install_suggestions(cli);
    app::install_help_format(cli);
    app::add_benchmark_commands(cli, state);
    app::add_devices_command(cli, state);
    app::add_run_command(cli, state);
    app::add_rerun_command(cli, state);
    app::add_compare_command(cli, state);
    app::add_report_command(cli, state);
    app::add_check_command(cli, state);
    app::add_doctor_command(cli, state);
    app::add_completions_command(cli, state);
    install_signal_handlers();
    cli.parse(argc, argv);
    return state.exit_code;
  } catch (const CLI::ParseError& e) {
    const int code = cli.exit(e);
    return code == 0 ? exit_code::success : exit_code::usage;
  } catch (const usage_error& e) {
    print_error("", e.what());
    return exit_code::usage;
  } catch (const cuda::no_device_error& e) {
    print_error("", e.what(), state.no_device_hint.empty() ? "." : state.no_device_hint.c_str());
    return exit_code::no_device;
  } catch (const cuda::cuda_error& e) {
    print_error("CUDA: ", e.what());
    return exit_code::cuda;
  } catch (const std::exception& e) {
    print_error("", e.what());
    return exit_code::usage;
  }
}

/// Runs the command, then checks that all it wrote to stdout through std::cout arrived (--help,
/// --version, completions, dry-run listings): a failure is "cannot write to stdout", and exit 2
/// unless the command had already failed with its own code.
int run_main(int argc, char** argv) {
  using namespace gpubench;
  const int code = dispatch(argc, argv);
  try {
    flush_stdout();
  } catch (const usage_error& e) {
    print_error("", e.what());
    return code == exit_code::success ? exit_code::usage : code;
  }
  return code;
}
} // namespace

int main(int argc, char** argv) {
  try {
    const gpubench::checked_stdout checked; // std::cout's writes are checked from here on
    // The environment is read here, once, before any thread starts (environment.hpp).
    (void)gpubench::process_environment();
    return run_main(argc, argv);
  } catch (...) { // only what run_main's own handlers cannot catch: its set-up, or a handler
    std::fputs("Error: gpubench could not start (out of memory?)\n", stderr);
    return gpubench::exit_code::usage;
  }
}
