// "Did you mean": the message for a word nobody took (an unknown option or command), with the
// closest option or command suggested (install_suggestions, commands.hpp).
#include "commands.hpp"

#include "gpubench/engine/benchmark.hpp"
#include "gpubench/registry/registry.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpubench::app {

namespace {

/// The long option names of `app`, with their dashes.
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
  return out;
}

/// The words of an ExtrasError's message ("... not expected: b a"), in the order they were typed:
/// CLI11 2.1 joins them with single spaces, last first (a word with a space of its own is split).
std::vector<std::string> unexpected_words(const CLI::Error& e) {
  const std::string text = e.what();
  const auto colon = text.find(": ");
  std::vector<std::string> words;
  if (colon == std::string::npos) return words;
  std::size_t pos = colon + 2;
  while (pos <= text.size()) {
    const auto space = std::min(text.find(' ', pos), text.size());
    if (space > pos) words.push_back(text.substr(pos, space - pos));
    pos = space + 1;
  }
  std::reverse(words.begin(), words.end());
  return words;
}

} // namespace

void install_suggestions(CLI::App& app) {
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    // The words nobody took: an ExtrasError names them; a missing subcommand leaves them over.
    const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
    const auto words = extras ? unexpected_words(e) : top->remaining();
    // One line that starts with "Error: ", as main gives every other error.
    const std::string msg =
        extras ? fmt::format("The following argument{} not expected: {} (--help lists the "
                             "options)",
                             words.size() == 1 ? " was" : "s were", fmt::join(words, " "))
               : std::string(e.what());
    if (words.empty()) return printable_message("Error: " + msg) + "\n";
    const auto chosen = top->get_subcommands();
    const CLI::App& scope = chosen.empty() ? *top : *chosen.front();
    std::vector<std::string> subcommands;
    // Hidden commands (man, for the build's man pages) have no group and are never offered.
    for (const CLI::App* sub : top->get_subcommands({}))
      if (!sub->get_group().empty()) subcommands.push_back(sub->get_name());
    std::vector<std::string> hints;
    for (const auto& w : words) {
      const benchmark* b = chosen.empty() ? nullptr : find_benchmark(scope.get_name());
      if (w == "--cpu-only" && b != nullptr && !b->supports_cpu_only) {
        hints.push_back(
            fmt::format("--cpu-only: {} has no CPU-only mode; it needs a GPU", b->name));
        continue;
      }
      const bool option = w.starts_with("-");
      const auto match = closest_match(option ? w.substr(0, w.find('=')) : w,
                                       option           ? option_names(scope)
                                       : chosen.empty() ? subcommands
                                                        : std::vector<std::string>{});
      if (match) {
        hints.push_back(fmt::format("'{}': did you mean '{}'?", w, *match));
      } else if (!option && chosen.empty()) {
        std::string list;
        for (const auto& name : subcommands) list += (list.empty() ? "" : ", ") + name;
        hints.push_back(
            fmt::format("'{}' is not a gpubench command; the commands are {}", w, list));
      }
    }
    // The words are the user's, echoed: clipped and escaped like every other message.
    return printable_message("Error: " +
                             (hints.empty() ? msg : fmt::format("{}", fmt::join(hints, "; ")))) +
           "\n";
  });
}

} // namespace gpubench::app
