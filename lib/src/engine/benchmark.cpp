// The parameter table at work: typed parsing with the range checks every option gets, the plan's
// expansion into points, and reading a point back with the table's defaults.
#include "gpubench/engine/benchmark.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

namespace gpubench {

using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& words, std::string_view sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(sep)) + w;
  return out;
}

/// Powers of two from 2^30 up as 2^k (2^36 reads better than 68719476736), the rest as digits.
std::string bound_text(double x) {
  if (x >= 1073741824.0 && x == std::floor(x) && x < 1.8e19) {
    const auto n = static_cast<std::uint64_t>(x);
    if ((n & (n - 1)) == 0) return format_size(n);
  }
  return fmt::format("{}", x);
}

bool in_range(const param_spec& s, double x) {
  if (s.max <= s.min) return true; // no range declared
  return (s.min_exclusive ? x > s.min : x >= s.min) && x <= s.max;
}

[[noreturn]] void out_of_range(const param_spec& s, std::string_view value) {
  throw usage_error(
      fmt::format("--{}: {} is out of range ({})", s.name, value, param_range_text(s)));
}

json parse_size_value(const param_spec& s, std::uint64_t x) {
  if (s.multiple_of > 0 && (x % s.multiple_of != 0 || !in_range(s, static_cast<double>(x))))
    throw usage_error(fmt::format("--{}: {} must be a multiple of {} from {} to {}", s.name, x,
                                  s.multiple_of, bound_text(s.min), bound_text(s.max)));
  if (!in_range(s, static_cast<double>(x))) out_of_range(s, std::to_string(x));
  return x;
}

json checked_number(const param_spec& s, double x) {
  if (in_range(s, x)) return x;
  if (s.min_exclusive)
    throw usage_error(fmt::format("--{}: '{}' is not one number in ({}, {}]", s.name, x, s.min,
                                  bound_text(s.max)));
  out_of_range(s, fmt::format("{}", x));
}

std::string words_of(const param_spec& s) { return join(s.choices, ", "); }

} // namespace

const param_spec& spec_of(const std::vector<param_spec>& table, std::string_view name) {
  for (const auto& s : table)
    if (s.name == name) return s;
  throw std::logic_error(fmt::format("no parameter named {}", name));
}

std::vector<json> parse_param(const param_spec& s, std::string_view text) {
  std::vector<json> out;
  switch (s.kind) {
  case param_kind::size:
    if (s.sweepable) {
      for (const auto x : parse_size_list(text, s.name)) out.push_back(parse_size_value(s, x));
    } else {
      out.push_back(parse_size_value(s, parse_size(text, s.name)));
    }
    return out;
  case param_kind::number: {
    const auto xs = parse_number_list(text, s.name);
    if (!s.sweepable && xs.size() != 1)
      throw usage_error(fmt::format("--{}: expected one number, got '{}'", s.name, text));
    for (const double x : xs) out.push_back(checked_number(s, x));
    return out;
  }
  case param_kind::numbers: {
    json list = json::array();
    for (const double x : parse_number_list(text, s.name)) list.push_back(checked_number(s, x));
    out.push_back(std::move(list));
    return out;
  }
  case param_kind::word:
    if (s.sweepable) {
      for (auto& w : parse_word_list(text, s.name, s.choices)) out.emplace_back(std::move(w));
      return out;
    }
    // Any case matches (--interp Nearest), and the result records the choice as declared.
    for (const auto& c : s.choices)
      if (c.size() == text.size() &&
          std::equal(c.begin(), c.end(), text.begin(), [](char x, char y) {
            return std::tolower(static_cast<unsigned char>(x)) ==
                   std::tolower(static_cast<unsigned char>(y));
          })) {
        out.emplace_back(c);
        return out;
      }
    throw usage_error(fmt::format("--{}: '{}' is not one of {}{}", s.name, text, words_of(s),
                                  did_you_mean(text, s.choices)));
  case param_kind::words: {
    const auto given = parse_word_list(text, s.name, s.choices);
    std::vector<std::string> canonical;
    for (const auto& c : s.choices)
      if (std::find(given.begin(), given.end(), c) != given.end()) canonical.push_back(c);
    out.emplace_back(join(canonical, ","));
    return out;
  }
  case param_kind::word_or_size:
    if (std::find(s.choices.begin(), s.choices.end(), text) != s.choices.end()) {
      out.emplace_back(std::string(text));
    } else {
      const auto x = parse_size(text, s.name);
      if (!in_range(s, static_cast<double>(x))) out_of_range(s, std::to_string(x));
      out.emplace_back(std::to_string(x));
    }
    return out;
  case param_kind::text:
  case param_kind::path: out.emplace_back(std::string(text)); return out;
  }
  return out;
}

std::string param_type_name(const param_spec& s) {
  if (!s.metavar.empty()) return s.metavar;
  const std::string choices = "{" + join(s.choices, "|") + "}";
  switch (s.kind) {
  case param_kind::size: return s.sweepable ? "SIZE-LIST" : "SIZE";
  case param_kind::number: return "NUMBER";
  case param_kind::numbers: return "NUMBER[,NUMBER...]";
  case param_kind::word: return s.sweepable ? choices + "[,...]|all" : choices;
  case param_kind::words: return choices + "[,...]|all";
  case param_kind::word_or_size: return choices + "|COUNT";
  case param_kind::text: return "TEXT";
  case param_kind::path: return "DIR";
  }
  return "TEXT";
}

std::string param_range_text(const param_spec& s) {
  switch (s.kind) {
  case param_kind::size:
  case param_kind::word_or_size: {
    if (s.max <= s.min) return {};
    std::string r = fmt::format("{} to {}", bound_text(s.min), bound_text(s.max));
    if (!s.unit.empty()) r += " " + s.unit;
    if (s.multiple_of > 0) r += fmt::format(", multiple of {}", s.multiple_of);
    return r;
  }
  case param_kind::number:
  case param_kind::numbers:
    if (s.max <= s.min) return {};
    return s.min_exclusive ? fmt::format("above {}, at most {}", s.min, bound_text(s.max))
                           : fmt::format("{} to {}", s.min, bound_text(s.max));
  case param_kind::word:
  case param_kind::words:
  case param_kind::text:
  case param_kind::path: return {};
  }
  return {};
}

param_spec elements_param(std::string help, std::string default_value) {
  return {.name = "n",
          .help = std::move(help),
          .default_value = std::move(default_value),
          .sweepable = true,
          .kind = param_kind::size,
          .min = 1,
          .max = 68719476736.0 /* 2^36 */,
          .unit = "elements"};
}

param_spec dtype_param(std::vector<std::string> types) {
  return {.name = "dtype",
          .help = "element type (a list sweeps)",
          .default_value = "f32",
          .sweepable = true,
          .kind = param_kind::word,
          .choices = std::move(types)};
}

param_spec block_param() {
  return {.name = "block",
          .help = "threads per block",
          .default_value = "256",
          .sweepable = true,
          .kind = param_kind::size,
          .min = 32,
          .max = 1024,
          .multiple_of = 32,
          .gpu_only = true};
}

param_spec grid_param(std::string help, double max_blocks, std::vector<std::string> choices) {
  return {.name = "grid",
          .help = std::move(help),
          .default_value = "vectors",
          .kind = param_kind::word_or_size,
          .min = 1,
          .max = max_blocks,
          .choices = std::move(choices),
          .gpu_only = true};
}

void complete_declaration(benchmark& b) {
  // The lambda owns copies: benchmarks are values and get copied into the registry.
  b.plan = [table = b.params, finish = b.finish_point, check = b.check_plan,
            name = b.name](const param_values& values, const common_options& opts) {
    json all = json::object();
    std::vector<json> points{json::object()};
    for (const auto& s : table) {
      const std::string& text = value_of(values, s.name);
      if (text.empty() && s.default_value.empty()) continue; // unset optional parameter
      auto typed = parse_param(s, text);
      all[s.name] = s.sweepable ? json(typed) : typed.front();
      if (!s.in_point || (opts.cpu_only && s.gpu_only)) continue;
      // The runner counts the points exactly against max_points; this bound only keeps a
      // runaway product of sweeps from filling memory first.
      if (points.size() * typed.size() > 100 * max_points)
        throw usage_error(fmt::format("{}: the sweep has more than {} points, more than the limit "
                                      "of {}; split it into several runs",
                                      name, 100 * max_points, max_points));
      std::vector<json> next;
      for (const auto& p : points) {
        const auto& [key, wanted] = s.only_when;
        if (!key.empty() && p.value(key, std::string()) != wanted) {
          next.push_back(p);
          continue;
        }
        for (const auto& v : typed) {
          next.push_back(p);
          next.back()[s.name] = v;
        }
      }
      points = std::move(next);
    }
    if (finish)
      for (auto& p : points) finish(p, all, opts);
    if (check) check(points, all, values, opts);
    return points;
  };
  if (b.run_point)
    b.run_point = [run = b.run_point, plumbing = b.after_point](const point_view& point,
                                                                run_context& ctx) {
      result r = run(point, ctx);
      complete_point(plumbing, r, ctx, point.device());
      return r;
    };
}

const benchmark* find_benchmark(std::span<const benchmark> catalog,
                                std::string_view name) noexcept {
  for (const auto& b : catalog)
    if (b.name == name) return &b;
  return nullptr;
}

summary_writers summary_tables(std::span<const benchmark> catalog) {
  summary_writers out;
  for (const auto& b : catalog)
    if (b.summary_table) out.emplace(b.name, b.summary_table);
  return out;
}

param_values with_defaults(const benchmark& b, const param_values& given) {
  param_values out;
  for (const auto& p : b.params) out[p.name] = p.default_value;
  for (const auto& [k, v] : given) {
    if (out.find(k) == out.end()) {
      std::vector<std::string> known;
      for (const auto& p : b.params) known.push_back(p.name);
      throw usage_error(fmt::format("{}: unknown parameter '{}'{} (known: {})", b.name, clip(k),
                                    did_you_mean(k, known), join(known, ", ")));
    }
    out[k] = v;
  }
  return out;
}

const std::string& value_of(const param_values& v, std::string_view name) {
  const auto it = v.find(name);
  GPUBENCH_EXPECTS(it != v.end(), fmt::format("parameter {} has no value", name));
  return it->second;
}

int point_device(const json& point) { return point.value("device", -1); }

namespace {

/// Edits (insert, delete, substitute, swap two neighbours) that turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string normalized(std::string_view w) {
  std::string s(w);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

} // namespace

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  if (word.empty()) return std::nullopt;
  const std::string w = normalized(word);
  // A third of the word may be wrong (at least one letter, at most three): beyond that a
  // suggestion is more often a guess than the word meant.
  const std::size_t limit = std::clamp<std::size_t>(w.size() / 3, 1, 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t dist = edit_distance(w, normalized(c));
    const bool prefix = w.size() >= 3 && normalized(c).starts_with(w);
    const std::size_t score = prefix ? std::min<std::size_t>(dist, 1) : dist;
    if (score < best_distance) {
      best_distance = score;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const auto m = closest_match(word, candidates);
  return m ? fmt::format(" (did you mean '{}'?)", *m) : std::string();
}

} // namespace gpubench
