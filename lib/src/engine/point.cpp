// Reading a planned point by type: the table says what each key is, the planner has checked it.
#include "gpubench/engine/point.hpp"

#include <fmt/format.h>

#include <charconv>

namespace gpubench {

using nlohmann::json;

int point_view::device() const noexcept { return point_device(*values_); }

bool point_view::has(std::string_view name) const {
  (void)spec(name);
  return values_->contains(name);
}

const param_spec& point_view::spec(std::string_view name) const { return spec_of(*table_, name); }

json point_view::value(std::string_view name) const {
  const param_spec& s = spec(name);
  if (const auto it = values_->find(name); it != values_->end()) return *it;
  if (s.default_value.empty())
    throw std::logic_error(fmt::format("parameter {} has no value in this point", name));
  return parse_param(s, s.default_value).front();
}

void point_view::throw_wrong_type(std::string_view name, std::string_view wanted) const {
  throw std::logic_error(
      fmt::format("parameter {} read as {}, but the point holds {}", name, wanted,
                  values_->contains(name) ? values_->at(std::string(name)).dump() : "nothing"));
}

json point_view::number_value(std::string_view name) const {
  const param_spec& s = spec(name);
  if (s.kind != param_kind::size && s.kind != param_kind::number)
    throw_wrong_type(name, "a number");
  json v = value(name);
  if (!v.is_number()) throw_wrong_type(name, "a number");
  return v;
}

std::string point_view::text(std::string_view name) const {
  const param_spec& s = spec(name);
  if (s.kind != param_kind::word && s.kind != param_kind::text && s.kind != param_kind::path)
    throw_wrong_type(name, "a word, text or path");
  if (!values_->contains(name) && s.default_value.empty()) return {};
  const json v = value(name);
  if (!v.is_string()) throw_wrong_type(name, "a string");
  return v.get<std::string>();
}

std::string point_view::word_text(std::string_view name) const {
  if (spec(name).kind != param_kind::word) throw_wrong_type(name, "a word");
  return text(name);
}

std::vector<std::string> point_view::word_list(std::string_view name) const {
  if (spec(name).kind != param_kind::words) throw_wrong_type(name, "a set of words");
  const json v = value(name);
  if (!v.is_string()) throw_wrong_type(name, "a set of words");
  std::vector<std::string> out;
  const std::string joined = v.get<std::string>();
  std::size_t start = 0;
  while (start <= joined.size() && !joined.empty()) {
    const std::size_t comma = joined.find(',', start);
    out.push_back(joined.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<double> point_view::numbers(std::string_view name) const {
  if (spec(name).kind != param_kind::numbers) throw_wrong_type(name, "a list of numbers");
  const json v = value(name);
  if (!v.is_array()) throw_wrong_type(name, "a list of numbers");
  std::vector<double> out;
  for (const auto& x : v) {
    if (!x.is_number()) throw_wrong_type(name, "a list of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

word_or_count point_view::word_or_size(std::string_view name) const {
  const param_spec& s = spec(name);
  if (s.kind != param_kind::word_or_size) throw_wrong_type(name, "a word or a count");
  const json v = value(name);
  if (!v.is_string()) throw_wrong_type(name, "a word or a count");
  std::string w = v.get<std::string>();
  for (const auto& c : s.choices)
    if (c == w) return w;
  // The planner wrote the count as its digits (parse_param): read them back exactly.
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), x);
  if (ec != std::errc() || end != w.data() + w.size() || x < 0)
    throw_wrong_type(name, "a word or a count");
  return x;
}

} // namespace gpubench
