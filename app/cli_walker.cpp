// The walk, plus what CLI11 cannot say about an option: the words it accepts, read from the type
// each subcommand declares for it ("{f32|f64}[,...]|all", from the benchmark's own parameter
// table), and which values are file names.
#include "cli_walker.hpp"

namespace gpubench::app {

namespace {

/// The fixed set of values a type name declares: "{f32|f64}[,...]|all" gives f32, f64, all;
/// "{vectors|device}|COUNT" gives vectors, device; "INT" or "FILE" gives none.
std::vector<std::string> declared_words(const std::string& type) {
  std::vector<std::string> words;
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return words;
  std::string word;
  for (std::size_t i = open + 1; i <= close; ++i) {
    if (type[i] == '|' || i == close) {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += type[i];
    }
  }
  if (type.find("|all", close) != std::string::npos) words.emplace_back("all");
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
  o.words = declared_words(opt.get_type_name());
  if (!o.words.empty()) o.file = false; // a positional of fixed words (completions SHELL)
  for (const auto& n : o.names)
    if (is_file_option(n)) o.file = true;
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
