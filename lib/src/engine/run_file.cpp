// Run-file parsing: every error names the key path, the value found and what was expected.
#include "gpubench/engine/run_file.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/engine/plan_listing.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

namespace gpubench {
namespace {

using nlohmann::json;

/// A value as it appears in the file, shortened so that an error message stays one line. Never
/// serializes more of the value than it shows: a file may hold megabytes in one value.
std::string show(const json& v) { return preview(v, 60); }

[[noreturn]] void fail(std::string_view path, const json& value, std::string_view expected) {
  fail_value(path, value, expected);
}

template <typename Names>
std::string join(const Names& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

void reject_unknown_keys(const json& obj, std::string_view path,
                         std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw usage_error(fmt::format("{}{}{}: unknown key (value {}); expected one of {}", path,
                                    path.empty() ? "" : ".", clip(key, 40), show(value),
                                    join(known)));
    }
  }
}

std::string child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string text_of(const json& v, std::string_view path) {
  if (!v.is_string()) fail(path, v, "a string");
  return v.get<std::string>();
}

/// A string gpubench prints (a name, a description): printable and of bounded length.
std::string printable_of(const json& v, std::string_view path) {
  std::string t = text_of(v, path);
  if (!printable_field(t)) fail(path, v, printable_field_rule());
  return t;
}

/// The spelling of "options" before it followed the command line (still read, with a note).
std::optional<std::string_view> current_spelling(std::string_view old) {
  static constexpr std::pair<std::string_view, std::string_view> renamed[] = {
      {"min_samples", "min-samples"}, {"max_samples", "max-samples"}, {"min_time", "min-time"},
      {"max_noise", "max-noise"},     {"cpu_threads", "cpu-threads"}, {"cpu_only", "cpu-only"},
      {"verify", "no-verify"},        {"batch_time", "batch-time"}};
  for (const auto& [from, to] : renamed)
    if (from == old) return to;
  return std::nullopt;
}

run_file_options parse_options(const json& j, std::string_view path,
                               std::vector<std::string>& notes) {
  if (!j.is_object()) fail(path, j, "an object of measurement options");
  run_file_options o;
  for (const auto& [written, v] : j.items()) {
    const auto p = child(path, written);
    std::string key = written;
    if (const auto now = current_spelling(written)) {
      key = std::string(*now);
      notes.push_back(written == "verify"
                          ? fmt::format("{}: deprecated; write \"no-verify\": {} (as the command "
                                        "line spells it)",
                                        p, v.is_boolean() && v.get<bool>() ? "false" : "true")
                          : fmt::format("{}: the snake_case spelling is deprecated; write \"{}\" "
                                        "(as the command line spells it)",
                                        p, key));
    }
    const option_spec* spec = find_option(key);
    if (spec == nullptr) {
      std::vector<std::string> known;
      for (const auto& row : measurement_options()) known.push_back(row.name);
      throw usage_error(fmt::format("{}: unknown key (value {}); expected one of {}{}", p, show(v),
                                    join(known), did_you_mean(written, known)));
    }
    if (o.values.contains(key))
      throw usage_error(
          fmt::format("{}: \"{}\" is given twice (once in the old spelling)", p, key));
    if (written == "verify") {
      o.values[key] = !read_option_value(*spec, v, p).get<bool>();
      continue;
    }
    o.values[key] = read_option_value(*spec, v, p);
  }
  const auto& values = o.values;
  if (values.value("warm", false) && values.contains("l2-flush") && values["l2-flush"] != "none") {
    throw usage_error(fmt::format("{}: \"warm\": true means \"l2-flush\": \"none\"; it conflicts "
                                  "with \"l2-flush\": \"{}\" (give one of them)",
                                  path, values["l2-flush"].get<std::string>()));
  }
  if (values.contains("min-samples") && values.contains("max-samples") &&
      values["min-samples"].get<int>() > values["max-samples"].get<int>()) {
    throw usage_error(fmt::format("{}: min-samples ({}) is larger than max-samples ({})", path,
                                  values["min-samples"].get<int>(),
                                  values["max-samples"].get<int>()));
  }
  return o;
}

/// One scalar parameter value as the command line would spell it.
std::string scalar_text(const json& v, std::string_view path, std::string_view expected) {
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s.empty()) fail(path, v, expected);
    return s;
  }
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, v, expected);
    return fmt::format("{}", d);
  }
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  fail(path, v, expected);
}

std::string param_text(const json& v, const param_spec& spec, std::string_view path) {
  const auto* scalar_expected = "a string, a number or a boolean";
  if (!v.is_array()) {
    return scalar_text(v, path,
                       spec.sweepable ? "a string, a number, a boolean, or a non-empty list of them"
                                      : scalar_expected);
  }
  if (!spec.sweepable) {
    fail(path, v, fmt::format("a single value ({} takes no list: it cannot be swept)", spec.name));
  }
  if (v.empty()) fail(path, v, "a non-empty list (an empty list would run nothing)");
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!out.empty()) out += ',';
    out += scalar_text(v[i], fmt::format("{}[{}]", path, i), scalar_expected);
  }
  return out;
}

run_file_entry parse_entry(const json& j, std::string_view path,
                           std::span<const benchmark> catalog) {
  if (!j.is_object()) fail(path, j, "an object with \"benchmark\" and \"params\"");
  reject_unknown_keys(j, path, {"benchmark", "params", "description"});
  std::vector<std::string> names;
  for (const auto& b : catalog) names.push_back(b.name);

  const auto bench_path = child(path, "benchmark");
  if (!j.contains("benchmark")) {
    throw usage_error(
        fmt::format("{}: missing; expected the name of a benchmark ({})", bench_path, join(names)));
  }
  const auto bench_name = text_of(j.at("benchmark"), bench_path);
  const auto it = std::find_if(catalog.begin(), catalog.end(),
                               [&](const benchmark& b) { return b.name == bench_name; });
  if (it == catalog.end()) {
    throw usage_error(fmt::format("{}: \"{}\" is not a benchmark; expected one of {}{}", bench_path,
                                  clip(bench_name), join(names), did_you_mean(bench_name, names)));
  }

  run_file_entry e;
  e.bench = &*it;
  if (j.contains("description"))
    e.description = printable_of(j.at("description"), child(path, "description"));
  if (!j.contains("params")) return e;

  const auto params_path = child(path, "params");
  const auto& params = j.at("params");
  if (!params.is_object()) fail(params_path, params, "an object of parameter name -> value");
  std::vector<std::string> known;
  for (const auto& s : e.bench->params) known.push_back(s.name);
  for (const auto& [key, v] : params.items()) {
    const auto p = child(params_path, clip(key, 40));
    const std::string& name = key; // clang 14 cannot capture a structured binding
    const auto spec = std::find_if(e.bench->params.begin(), e.bench->params.end(),
                                   [&](const param_spec& s) { return s.name == name; });
    if (spec == e.bench->params.end()) {
      throw usage_error(fmt::format("{}: unknown parameter of {} (value {}); expected one of {}{}",
                                    p, e.bench->name, show(v), join(known),
                                    did_you_mean(key, known)));
    }
    e.params[key] = param_text(v, *spec, p);
  }
  return e;
}

} // namespace

run_file parse_run_file(const json& j, std::span<const benchmark> catalog) {
  if (!j.is_object()) fail("(top level)", j, "an object with a \"benchmarks\" list");
  reject_unknown_keys(j, "", {"$schema", "name", "description", "options", "benchmarks"});
  run_file f;
  if (j.contains("$schema")) (void)text_of(j.at("$schema"), "$schema");
  if (j.contains("name")) f.name = printable_of(j.at("name"), "name");
  if (j.contains("description")) f.description = printable_of(j.at("description"), "description");
  if (j.contains("options")) f.options = parse_options(j.at("options"), "options", f.notes);
  if (!j.contains("benchmarks")) {
    throw usage_error("benchmarks: missing; expected a non-empty list of "
                      "{\"benchmark\": NAME, \"params\": {...}} entries");
  }
  const auto& list = j.at("benchmarks");
  if (!list.is_array() || list.empty()) fail("benchmarks", list, "a non-empty list of entries");
  for (std::size_t i = 0; i < list.size(); ++i) {
    f.entries.push_back(parse_entry(list[i], fmt::format("benchmarks[{}]", i), catalog));
  }
  return f;
}

run_file load_run_file(const std::string& path, std::span<const benchmark> catalog) {
  const json j = load_untrusted_json(path, "run file");
  try {
    return parse_run_file(j, catalog);
  } catch (const usage_error& e) {
    throw usage_error(fmt::format("{}: {}", clip(path, 200), e.what()));
  }
}

void apply_run_file_options(const run_file_options& file, common_options& opts,
                            std::string& device_spec,
                            const std::function<bool(std::string_view)>& given_on_command_line) {
  // --warm and --l2-flush set one thing, the flush: either on the command line replaces both of
  // the file's.
  const bool flush_given = given_on_command_line("--warm") || given_on_command_line("--l2-flush");
  for (const auto& s : measurement_options()) {
    if (!file.values.contains(s.name) || given_on_command_line("--" + s.name)) continue;
    if ((s.name == "warm" || s.name == "l2-flush") && flush_given) continue;
    s.set({opts, device_spec}, file.values.at(s.name));
  }
}

std::vector<planned_point> plan_run_file(const run_file& file, const common_options& opts) {
  std::vector<planned_point> all;
  for (std::size_t i = 0; i < file.entries.size(); ++i) {
    const auto& e = file.entries[i];
    try {
      auto points = plan_points(*e.bench, with_defaults(*e.bench, e.params), opts);
      all.insert(all.end(), std::make_move_iterator(points.begin()),
                 std::make_move_iterator(points.end()));
    } catch (const usage_error& err) {
      throw usage_error(fmt::format("benchmarks[{}] ({}): {}", i, e.bench->name, err.what()));
    }
    if (all.size() > max_points) {
      throw usage_error(fmt::format("benchmarks[{}] ({}): the file plans more than {} points; "
                                    "split it or shorten the sweeps",
                                    i, e.bench->name, max_points));
    }
  }
  return all;
}

void write_plan(std::ostream& os, const run_file& file, const std::vector<planned_point>& points,
                output_format format) {
  write_plan(os, file.name.empty() ? std::string_view("run file") : std::string_view(file.name),
             points, format);
}

} // namespace gpubench
