// Run-file parsing: every error names the key path, the value found and what was expected.
#include "gpubench/engine/run_file.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/plan_listing.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/text_table.hpp"

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

std::string type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

[[noreturn]] void fail(std::string_view path, const json& value, std::string_view expected) {
  throw usage_error(
      fmt::format("{}: {} is {}; expected {}", path, show(value), type_name(value), expected));
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

bool bool_of(const json& v, std::string_view path) {
  if (!v.is_boolean()) fail(path, v, "true or false");
  return v.get<bool>();
}

std::int64_t integer_of(const json& v, std::string_view path, std::int64_t min, std::int64_t max) {
  const auto expected = fmt::format("an integer from {} to {}", min, max);
  if (!v.is_number_integer()) fail(path, v, expected);
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail(path, v, expected);
  const auto i = v.get<std::int64_t>();
  if (i < min || i > max) fail(path, v, expected);
  return i;
}

/// The whole range of --seed: 0 to 2^64-1 (JSON integers above 2^63-1 are unsigned).
std::uint64_t seed_of(const json& v, std::string_view path) {
  const auto* expected = "an integer from 0 to 2^64-1 (18446744073709551615)";
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) fail(path, v, expected); // negative
  fail(path, v, expected);
}

/// An integer option of a run file, in the range the command line's option takes (validate() in
/// options.cpp), so an out-of-range value is named by its key path.
int int_of(const json& v, std::string_view path, int min, int max) {
  return static_cast<int>(integer_of(v, path, min, max));
}

double seconds_of(const json& v, std::string_view path, bool allow_zero) {
  const auto* expected = allow_zero ? "a number of seconds >= 0" : "a number of seconds > 0";
  if (!v.is_number()) fail(path, v, expected);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || (!allow_zero && d == 0)) fail(path, v, expected);
  return d;
}

/// Percent as a number (1 means 1%) or a string ending in '%' ("1%", "0.5%").
double percent_of(const json& v, std::string_view path) {
  const auto* expected = "a percentage above 0 and at most 100, as a number (1) or text (\"1%\")";
  double pct = 0;
  if (v.is_number()) {
    pct = v.get<double>();
  } else if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s.empty() || s.back() != '%') fail(path, v, expected);
    s.pop_back();
    try {
      pct = parse_number(s, path); // the rules of every other number
    } catch (const usage_error&) {
      fail(path, v, expected);
    }
  } else {
    fail(path, v, expected);
  }
  if (!std::isfinite(pct) || pct <= 0 || pct > 100) fail(path, v, expected);
  return pct / 100.0;
}

l2_flush_mode l2_flush_of(const json& v, std::string_view path) {
  const auto expected = fmt::format("one of {}", l2_flush_choices());
  if (!v.is_string()) fail(path, v, expected);
  const auto mode = parse_l2_flush_mode(v.get<std::string>());
  if (!mode) fail(path, v, expected);
  return *mode;
}

std::string device_of(const json& v, std::string_view path) {
  const auto* expected = "a device number, a list of them, or \"all\"";
  if (v.is_number_integer()) return std::to_string(integer_of(v, path, 0, 1023));
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s.empty()) fail(path, v, expected);
    return s; // "all" or "0,1": resolved like --device
  }
  if (v.is_array() && !v.empty()) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto& d = v[i];
      const auto p = fmt::format("{}[{}]", path, i);
      if (!d.is_number_integer()) fail(p, d, "a device number");
      if (!out.empty()) out += ',';
      out += std::to_string(integer_of(d, p, 0, 1023));
    }
    return out;
  }
  fail(path, v, expected);
}

/// The keys of "options": the command line's option names without the dashes.
constexpr std::string_view option_keys[] = {
    "device",     "warmup", "min-samples",   "max-samples",    "min-time",   "max-noise",
    "timeout",    "warm",   "seed",          "cpu-threads",    "cpu-only",   "no-verify",
    "batch-time", "energy", "energy-window", "energy-windows", "timestamps", "l2-flush"};

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
  std::vector<std::string> seen;
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
    if (std::find(std::begin(option_keys), std::end(option_keys), key) == std::end(option_keys)) {
      const std::vector<std::string> known(std::begin(option_keys), std::end(option_keys));
      throw usage_error(fmt::format("{}: unknown key (value {}); expected one of {}{}", p, show(v),
                                    join(known), did_you_mean(written, known)));
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw usage_error(
          fmt::format("{}: \"{}\" is given twice (once in the old spelling)", p, key));
    seen.push_back(key);
    if (key == "device")
      o.device = device_of(v, p);
    else if (key == "warmup")
      o.warmup = int_of(v, p, 0, 1000000);
    else if (key == "min-samples")
      o.min_samples = int_of(v, p, 1, 10000000);
    else if (key == "max-samples")
      o.max_samples = int_of(v, p, 1, 10000000);
    else if (key == "min-time")
      o.min_time = seconds_of(v, p, true);
    else if (key == "max-noise")
      o.max_noise = percent_of(v, p);
    else if (key == "timeout")
      o.timeout = seconds_of(v, p, false);
    else if (key == "warm")
      o.warm = bool_of(v, p);
    else if (key == "seed")
      o.seed = seed_of(v, p);
    else if (key == "cpu-threads")
      o.cpu_threads = int_of(v, p, 0, 4096);
    else if (key == "cpu-only")
      o.cpu_only = bool_of(v, p);
    else if (written == "verify")
      o.verify = bool_of(v, p);
    else if (key == "no-verify")
      o.verify = !bool_of(v, p);
    else if (key == "batch-time")
      o.batch_time = seconds_of(v, p, true);
    else if (key == "energy")
      o.energy = bool_of(v, p);
    else if (key == "energy-window")
      o.energy_window = seconds_of(v, p, false);
    else if (key == "energy-windows")
      o.energy_windows = int_of(v, p, 5, 100);
    else if (key == "timestamps")
      o.timestamps = bool_of(v, p);
    else if (key == "l2-flush")
      o.l2_flush = l2_flush_of(v, p);
  }
  if (o.warm.value_or(false) && o.l2_flush && *o.l2_flush != l2_flush_mode::none) {
    throw usage_error(fmt::format("{}: \"warm\": true means \"l2-flush\": \"none\"; it conflicts "
                                  "with \"l2-flush\": \"{}\" (give one of them)",
                                  path, to_string(*o.l2_flush)));
  }
  if (o.min_samples && o.max_samples && *o.min_samples > *o.max_samples) {
    throw usage_error(fmt::format("{}: min-samples ({}) is larger than max-samples ({})", path,
                                  *o.min_samples, *o.max_samples));
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
  auto take = [&](const auto& value, std::string_view option, auto& target) {
    if (value && !given_on_command_line(option)) target = *value;
  };
  take(file.device, "--device", device_spec);
  take(file.warmup, "--warmup", opts.measure.warmup);
  take(file.min_samples, "--min-samples", opts.measure.min_samples);
  take(file.max_samples, "--max-samples", opts.measure.max_samples);
  take(file.min_time, "--min-time", opts.measure.min_time);
  take(file.max_noise, "--max-noise", opts.measure.max_noise);
  take(file.timeout, "--timeout", opts.measure.timeout);
  // --warm and --l2-flush set one thing, the flush: either on the command line replaces both of
  // the file's.
  if (!given_on_command_line("--warm") && !given_on_command_line("--l2-flush")) {
    if (file.warm) opts.measure.warm = *file.warm;
    if (file.l2_flush) opts.measure.l2_flush = *file.l2_flush;
  }
  take(file.seed, "--seed", opts.seed);
  take(file.cpu_threads, "--cpu-threads", opts.cpu_threads);
  take(file.cpu_only, "--cpu-only", opts.cpu_only);
  take(file.verify, "--no-verify", opts.verify);
  take(file.batch_time, "--batch-time", opts.measure.batch_time);
  take(file.energy, "--energy", opts.energy);
  take(file.energy_window, "--energy-window", opts.measure.energy_window);
  take(file.energy_windows, "--energy-windows", opts.measure.energy_windows);
  take(file.timestamps, "--timestamps", opts.measure.timestamps);
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
