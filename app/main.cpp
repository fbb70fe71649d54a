// gpubench: parse, dispatch, and turn exceptions into messages and documented exit codes.
#include "commands.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/errors.hpp"

#include <csignal>
#include <cstdio>
#include <exception>

namespace {
extern "C" void on_sigint(int /*signal*/) { gpubench::request_interrupt(); }

int run_main(int argc, char** argv) {
  using namespace gpubench;
  app::cli_state state{std::vector<std::string>(argv, argv + argc), 0};
  CLI::App cli{"gpubench: GPU vs CPU benchmarks, measured, verified and reported", "gpubench"};
  try {
    cli.set_version_flag("--version", std::string("gpubench ") + GPUBENCH_VERSION);
    cli.require_subcommand(1);
    cli.footer(app::exit_codes_help);
    app::add_benchmark_commands(cli, state);
    app::add_devices_command(cli, state);
    app::add_run_command(cli, state);
    app::add_compare_command(cli, state);
    app::add_report_command(cli, state);
    std::signal(SIGINT, on_sigint);
    cli.parse(argc, argv);
    return state.exit_code;
  } catch (const CLI::ParseError& e) {
    const int code = cli.exit(e);
    return code == 0 ? exit_code::success : exit_code::usage;
  } catch (const usage_error& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return exit_code::usage;
  } catch (const cuda::no_device_error& e) {
    std::fprintf(stderr, "Error: %s.%s\n", e.what(),
                 state.cpu_only_applies ? " Use --cpu-only to run the CPU reference alone." : "");
    return exit_code::no_device;
  } catch (const cuda::cuda_error& e) {
    std::fprintf(stderr, "Error: CUDA: %s\n", e.what());
    return exit_code::cuda;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return exit_code::usage;
  }
}
} // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (...) { // only what run_main's own handlers cannot catch: its set-up, or a handler
    std::fputs("Error: gpubench could not start (out of memory?)\n", stderr);
    return gpubench::exit_code::usage;
  }
}
