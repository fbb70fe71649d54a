#pragma once
// One walk over the CLI11 definitions, shared by the shell completions and the man pages, so
// neither can drift from the options the binary actually accepts (CLI11 has no generator).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpubench::app {

struct cli_option {
  std::vector<std::string> names; ///< "-q", "--quiet"; empty for a positional
  std::string positional;         ///< "FILE" for a positional
  std::string help;
  std::string default_value;
  bool takes_value = false;
  std::vector<std::string> words; ///< the values it accepts, when they are a fixed set
  bool file = false;              ///< its value is a path (complete file names)
};

struct cli_command {
  std::string name;
  std::string description;
  std::string footer;
  std::vector<cli_option> options;
  std::vector<cli_command> subcommands; ///< visible ones (hidden helpers such as `man` left out)
};

/// Walks `app` and its visible subcommands.
[[nodiscard]] cli_command walk_cli(const CLI::App& app);

} // namespace gpubench::app
