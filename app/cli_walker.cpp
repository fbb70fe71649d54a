// The walk, plus what CLI11 cannot say about an option: the word list of options whose values
// the benchmark drivers check themselves (parse_word_list), and which values are file names.
#include "cli_walker.hpp"

#include <map>

namespace gpubench::app {

namespace {

// Keep in step with the drivers' parse_word_list/word_option calls (lib/src/*_bench.cpp) and the
// subcommands' --format parsers; tests/cli/test_completions.py checks each word is accepted.
const std::map<std::string, std::vector<std::string>>& option_words() {
  static const std::map<std::string, std::vector<std::string>> words{
      {"--dtype", {"f32", "f64", "f16", "bf16", "all"}},
      {"--kernel", {"seed", "vectorized", "all"}},
      {"--memory", {"pinned", "pageable", "both"}},
      {"--interp", {"nearest", "bilinear"}},
      {"--out-dtype", {"f32", "f16", "bf16"}},
      {"--impl", {"staged", "fused", "all"}},
      {"--scenario", {"augment-train", "encoder-decoder", "all"}},
      {"--mode", {"serial", "streams", "graph", "cpu-augment", "all"}},
      {"--format", {"table", "json", "csv", "md"}},
  };
  return words;
}

bool is_file_option(const std::string& name) {
  return name == "--output" || name == "--input" || name == "--save-samples";
}

cli_option walk_option(const CLI::Option& opt) {
  cli_option o;
  for (const auto& s : opt.get_snames()) o.names.push_back("-" + s);
  for (const auto& l : opt.get_lnames()) o.names.push_back("--" + l);
  if (opt.get_positional()) {
    o.positional = opt.get_name();
    o.file = true; // gpubench's positionals are run files and result files
  }
  o.help = opt.get_description();
  o.default_value = opt.get_default_str();
  o.takes_value = opt.get_expected_max() != 0 && opt.get_type_size_max() > 0; // flags expect 0
  for (const auto& n : o.names) {
    if (const auto it = option_words().find(n); it != option_words().end()) o.words = it->second;
    if (is_file_option(n)) o.file = true;
  }
  return o;
}

} // namespace

cli_command walk_cli(const CLI::App& app) {
  cli_command c;
  c.name = app.get_name();
  c.description = app.get_description();
  c.footer = app.get_footer();
  for (const CLI::Option* opt : app.get_options()) c.options.push_back(walk_option(*opt));
  for (const CLI::App* sub : app.get_subcommands(
           [](const CLI::App* s) { return !s->get_group().empty() && !s->get_disabled(); }))
    c.subcommands.push_back(walk_cli(*sub));
  return c;
}

} // namespace gpubench::app
