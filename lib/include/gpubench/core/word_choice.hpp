#pragma once
// A word parameter's words beside the values a driver uses for them: one list gives both the
// parameter's choices (word_names) and the typed value of a point's word (point_view::word).
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

template <class E>
struct word_choice {
  std::string_view name;
  E value;
};

/// The names of `choices`, in order, for param_spec::choices.
template <class E>
std::vector<std::string> word_names(std::span<const word_choice<E>> choices) {
  std::vector<std::string> out;
  out.reserve(choices.size());
  for (const auto& c : choices) out.emplace_back(c.name);
  return out;
}

} // namespace gpubench
