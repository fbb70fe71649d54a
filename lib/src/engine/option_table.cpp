#include "gpubench/engine/option_table.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace gpubench {
namespace {

using nlohmann::json;

std::string json_type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

/// A row's name, help, kind and range, without accessors.
option_spec spec(std::string name, std::string help, option_kind kind, double min, double max) {
  option_spec s;
  s.name = std::move(name);
  s.help = std::move(help);
  s.kind = kind;
  s.min = min;
  s.max = max;
  return s;
}

/// A row's accessors, for the rows whose value is one field of common_options.
template <typename T>
option_spec row(std::string name, std::string help, option_kind kind, double min, double max,
                T common_options::*field) {
  option_spec s = spec(std::move(name), std::move(help), kind, min, max);
  s.get = [field](const common_options& o) { return json(o.*field); };
  s.set = [field](option_target to, const json& v) { to.opts.*field = v.get<T>(); };
  return s;
}

/// ... and for those whose value is one field of the measure options.
template <typename T>
option_spec measure_row(std::string name, std::string help, option_kind kind, double min,
                        double max, T measure_options::*field) {
  option_spec s = spec(std::move(name), std::move(help), kind, min, max);
  s.get = [field](const common_options& o) { return json(o.measure.*field); };
  s.set = [field](option_target to, const json& v) { to.opts.measure.*field = v.get<T>(); };
  return s;
}

/// The condition of the options that only change how GPU samples are taken.
std::string without_gpu(const common_options& o) {
  return o.cpu_only ? "with --cpu-only, which takes no GPU sample" : "";
}

std::vector<option_spec> make_table() {
  using k = option_kind;
  std::vector<option_spec> table;

  option_spec device;
  device.name = "device";
  device.help = "GPU index, list (0,1) or all";
  device.kind = k::devices;
  device.group = option_group::device;
  device.get = [](const common_options& o) { return json(o.devices); };
  device.set = [](option_target to, const json& v) { to.device_spec = v.get<std::string>(); };
  device.no_effect = without_gpu;
  table.push_back(std::move(device));

  table.push_back(measure_row("warmup", "discarded samples before sampling", k::integer, 0, 1000000,
                              &measure_options::warmup));
  table.push_back(measure_row("min-samples", "at least this many samples", k::integer, 1, 10000000,
                              &measure_options::min_samples));
  table.push_back(measure_row("max-samples",
                              "at most this many samples, and at least --min-samples", k::integer,
                              1, 10000000, &measure_options::max_samples));
  table.push_back(measure_row("min-time", "seconds of sampled time before stopping", k::seconds, 0,
                              86400, &measure_options::min_time));

  option_spec noise;
  noise.name = "max-noise";
  noise.help = "stop when rel. stddev <= PCT percent";
  noise.kind = k::percent;
  noise.min = 0;
  noise.max = 100;
  noise.min_exclusive = true;
  // Percent to 15 significant digits: 0.0175 * 100 is 1.7500000000000002 in binary.
  noise.get = [](const common_options& o) {
    const auto text = fmt::format("{:.15g}", o.measure.max_noise * 100);
    double pct = o.measure.max_noise * 100; // inf and nan as they are
    std::from_chars(text.data(), text.data() + text.size(), pct);
    return json(pct);
  };
  noise.set = [](option_target to, const json& v) {
    to.opts.measure.max_noise = v.get<double>() / 100;
  };
  noise.no_effect = [](const common_options& o) {
    return o.measure.stopping == stopping_rule::entropy
               ? std::string("with --stopping entropy, which stops on the samples' entropy")
               : std::string();
  };
  table.push_back(std::move(noise));

  auto timeout = measure_row("timeout", "wall seconds per measurement at most, warm-up included",
                             k::seconds, 0, 86400, &measure_options::timeout);
  timeout.min_exclusive = true;
  table.push_back(std::move(timeout));

  option_spec stopping;
  stopping.name = "stopping";
  stopping.help = "the rule that ends sampling as converged: stable (rel. stddev or the trimmed "
                  "mean's interval, by --max-noise), entropy (the samples' entropy stopped "
                  "growing, as nvbench)";
  stopping.kind = k::word;
  for (const auto r : {stopping_rule::stable, stopping_rule::entropy})
    stopping.choices.emplace_back(to_string(r));
  stopping.get = [](const common_options& o) {
    return json(std::string(to_string(o.measure.stopping)));
  };
  stopping.set = [](option_target to, const json& v) {
    to.opts.measure.stopping =
        parse_stopping_rule(v.get<std::string>()).value_or(stopping_rule::stable);
  };
  table.push_back(std::move(stopping));
  const auto entropy_only = [](const common_options& o) {
    return o.measure.stopping == stopping_rule::entropy ? std::string()
                                                        : std::string("without --stopping entropy");
  };
  table.push_back(measure_row("entropy-max-angle",
                              "with --stopping entropy: the entropy's fitted line may rise at "
                              "most this many degrees",
                              k::number, 0, 90, &measure_options::entropy_max_angle));
  table.back().no_effect = entropy_only;
  table.push_back(measure_row("entropy-min-r2",
                              "with --stopping entropy: the line must fit the entropies with R^2 "
                              "at least this",
                              k::number, 0, 1, &measure_options::entropy_min_r2));
  table.back().no_effect = entropy_only;

  // Rows that change how GPU samples are taken (their gpu_sampling mark).
  const auto push_gpu_sampling = [&table](option_spec r) {
    r.gpu_sampling = true;
    r.no_effect = without_gpu;
    table.push_back(std::move(r));
  };
  push_gpu_sampling(measure_row("warm",
                                "do not flush L2 between GPU samples (the same as --l2-flush none)",
                                k::flag, 0, 0, &measure_options::warm));

  option_spec flush;
  flush.name = "l2-flush";
  flush.help = "how L2 is emptied before each GPU sample: read (clean lines), write (dirty lines, "
               "as nvbench), none (as --warm)";
  flush.kind = k::word;
  for (const auto m : {l2_flush_mode::read, l2_flush_mode::write, l2_flush_mode::none})
    flush.choices.emplace_back(to_string(m));
  flush.gpu_sampling = true;
  flush.no_effect = without_gpu;
  flush.get = [](const common_options& o) {
    return json(std::string(to_string(effective_l2_flush(o.measure))));
  };
  flush.set = [](option_target to, const json& v) {
    auto& m = to.opts.measure;
    m.l2_flush = parse_l2_flush_mode(v.get<std::string>());
    // The flush --warm (or its absence) implies is left unset, as if not given: a record's
    // "l2-flush": "read" is no choice the user made.
    if (m.l2_flush == (m.warm ? l2_flush_mode::none : l2_flush_mode::read)) m.l2_flush.reset();
  };
  flush.is_set = [](const common_options& o) { return o.measure.l2_flush.has_value(); };
  table.push_back(std::move(flush));

  push_gpu_sampling(measure_row("batch-time",
                                "also time back-to-back launches, about S seconds a sample, as "
                                "rows '<name> (batch)'; 0: off",
                                k::seconds, 0, 60, &measure_options::batch_time));
  push_gpu_sampling(measure_row("timestamps",
                                "also time each sample by the GPU's own kernel timestamps "
                                "(CUPTI), as rows '<name> (timestamps)'",
                                k::flag, 0, 0, &measure_options::timestamps));
  push_gpu_sampling(measure_row("reject-throttled",
                                "discard each GPU sample whose SM clock, counted on the GPU "
                                "across it, fell below this fraction of the median so far, "
                                "before the stopping rule sees it; 0: off",
                                k::number, 0, 1, &measure_options::reject_throttled));
  table.push_back(
      row("energy",
          "energy per operation from the NVML energy counter (adds about 6 s per measured row)",
          k::flag, 0, 0, &common_options::energy));
  const auto energy_only = [](const common_options& o) {
    return o.energy ? std::string() : std::string("without --energy");
  };
  table.push_back(measure_row(
      "energy-window", "with --energy: each window lasts at least S seconds and 10 counter steps",
      k::seconds, 1, 60, &measure_options::energy_window));
  table.back().no_effect = energy_only;
  table.push_back(measure_row("energy-windows",
                              "with --energy: windows measured, each from a random phase",
                              k::integer, 5, 100, &measure_options::energy_windows));
  table.back().no_effect = energy_only;
  table.push_back(row("concurrent",
                      "with several devices: run each point on all of them at once "
                      "(docs/multi-gpu.md)",
                      k::flag, 0, 0, &common_options::concurrent));
  auto sync =
      row("sync-timeout", "seconds a GPU thread or MPI rank waits for the others before giving up",
          k::seconds, 0, 86400, &common_options::sync_timeout);
  sync.min_exclusive = true;
  sync.changes_measurement = false;
  table.push_back(std::move(sync));

  auto seed =
      row("seed", "seed of all random inputs and parameters", k::seed, 0, 0, &common_options::seed);
  seed.group = option_group::inputs;
  table.push_back(std::move(seed));
  option_spec no_verify;
  no_verify.name = "no-verify";
  no_verify.help = "skip the GPU-vs-CPU check";
  no_verify.kind = k::flag;
  no_verify.group = option_group::inputs;
  no_verify.get = [](const common_options& o) { return json(!o.verify); };
  no_verify.set = [](option_target to, const json& v) { to.opts.verify = !v.get<bool>(); };
  table.push_back(std::move(no_verify));

  auto threads =
      row("cpu-threads", "threads for the CPU reference (0: every CPU this process may use)",
          k::integer, 0, 4096, &common_options::cpu_threads);
  threads.group = option_group::cpu_threads;
  table.push_back(std::move(threads));
  auto cpu_only = row("cpu-only", "run and report the CPU reference alone (no GPU)", k::flag, 0, 0,
                      &common_options::cpu_only);
  cpu_only.group = option_group::cpu_only;
  table.push_back(std::move(cpu_only));
  return table;
}

std::string number_text(double v) { return fmt::format("{}", v); }

std::string number_expected(const option_spec& s) {
  return s.min_exclusive
             ? fmt::format("a number above {} and at most {}", number_text(s.min),
                           number_text(s.max))
             : fmt::format("a number from {} to {}", number_text(s.min), number_text(s.max));
}

std::string seconds_expected(const option_spec& s) {
  return s.min_exclusive ? fmt::format("a number of seconds above {} and at most {}",
                                       number_text(s.min), number_text(s.max))
                         : fmt::format("a number of seconds from {} to {}", number_text(s.min),
                                       number_text(s.max));
}

std::int64_t integer_in(const json& v, std::string_view path, std::int64_t min, std::int64_t max) {
  const auto expected = fmt::format("an integer from {} to {}", min, max);
  if (!v.is_number_integer()) fail_value(path, v, expected);
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail_value(path, v, expected);
  const auto i = v.get<std::int64_t>();
  if (i < min || i > max) fail_value(path, v, expected);
  return i;
}

bool in_range(const option_spec& s, double v) {
  return std::isfinite(v) && (s.min_exclusive ? v > s.min : v >= s.min) && v <= s.max;
}

std::string devices_text(const json& v, std::string_view path) {
  const auto* expected = "a device number, a list of them, or \"all\"";
  if (v.is_number_integer()) return std::to_string(integer_in(v, path, 0, 1023));
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s.empty()) fail_value(path, v, expected);
    (void)parse_device_list(s, path); // "all" or "0,1", read as --device reads it
    return s;
  }
  if (v.is_array() && !v.empty()) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto& d = v[i];
      const auto p = fmt::format("{}[{}]", path, i);
      if (!d.is_number_integer()) fail_value(p, d, "a device number");
      if (!out.empty()) out += ',';
      out += std::to_string(integer_in(d, p, 0, 1023));
    }
    return out;
  }
  fail_value(path, v, expected);
}

} // namespace

void fail_value(std::string_view path, const json& value, std::string_view expected) {
  throw usage_error(fmt::format("{}: {} is {}; expected {}", path, preview(value, 60),
                                json_type_name(value), expected));
}

const std::vector<option_spec>& measurement_options() {
  static const std::vector<option_spec> table = make_table();
  return table;
}

const option_spec* find_option(std::string_view name) noexcept {
  for (const auto& s : measurement_options())
    if (s.name == name) return &s;
  return nullptr;
}

std::optional<std::string> match_choice(const option_spec& s, std::string_view text) {
  const auto lower = [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  for (const auto& c : s.choices)
    if (c.size() == text.size() &&
        std::equal(c.begin(), c.end(), text.begin(), [&](char a, char b) { return a == lower(b); }))
      return c;
  return std::nullopt;
}

json read_option_value(const option_spec& s, const json& v, std::string_view path) {
  switch (s.kind) {
  case option_kind::integer:
    return integer_in(v, path, static_cast<std::int64_t>(s.min), static_cast<std::int64_t>(s.max));
  case option_kind::seconds: {
    if (!v.is_number() || !in_range(s, v.get<double>())) fail_value(path, v, seconds_expected(s));
    return v.get<double>();
  }
  case option_kind::number: {
    if (!v.is_number() || !in_range(s, v.get<double>())) fail_value(path, v, number_expected(s));
    return v.get<double>();
  }
  case option_kind::percent: {
    const auto expected = fmt::format("a percentage above {} and at most {}, as a number (1) or "
                                      "text (\"1%\")",
                                      number_text(s.min), number_text(s.max));
    double pct = 0;
    if (v.is_number()) {
      pct = v.get<double>();
    } else if (const auto text =
                   v.is_string() ? read_percent(v.get<std::string>(), true) : std::nullopt) {
      pct = *text; // the rules of every percentage gpubench reads
    } else {
      fail_value(path, v, expected);
    }
    if (!in_range(s, pct)) fail_value(path, v, expected);
    return pct;
  }
  case option_kind::flag:
    if (!v.is_boolean()) fail_value(path, v, "true or false");
    return v;
  case option_kind::word: {
    const auto choice = v.is_string() ? match_choice(s, v.get<std::string>()) : std::nullopt;
    if (!choice) fail_value(path, v, fmt::format("one of {}", fmt::join(s.choices, ", ")));
    return *choice;
  }
  case option_kind::seed:
    if (!v.is_number_unsigned())
      fail_value(path, v, "an integer from 0 to 2^64-1 (18446744073709551615)");
    return v;
  case option_kind::devices: return devices_text(v, path);
  }
  return v;
}

bool option_is_set(const option_spec& s, const common_options& opts) {
  return s.is_set ? s.is_set(opts) : s.get(opts) != s.get(common_options{});
}

json options_record(const common_options& opts) {
  json out = json::object();
  for (const auto& s : measurement_options()) out[s.name] = s.get(opts);
  return out;
}

std::string option_type_name(const option_spec& s) {
  switch (s.kind) {
  case option_kind::integer: return "INT";
  case option_kind::seconds: return "SECONDS";
  case option_kind::percent: return "PCT";
  case option_kind::number: return "NUM";
  case option_kind::flag: return "";
  case option_kind::word: return fmt::format("{{{}}}", fmt::join(s.choices, "|"));
  case option_kind::seed: return "UINT64";
  case option_kind::devices: return "N|LIST|all";
  }
  return "";
}

std::string option_range_text(const option_spec& s) {
  switch (s.kind) {
  case option_kind::integer:
  case option_kind::seconds:
  case option_kind::percent:
  case option_kind::number:
    return s.min_exclusive
               ? fmt::format("above {}, at most {}", number_text(s.min), number_text(s.max))
               : fmt::format("{} to {}", number_text(s.min), number_text(s.max));
  default: return "";
  }
}

std::string option_default_text(const option_spec& s) {
  const json v = s.get(common_options{});
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const auto& d : v) out += (out.empty() ? "" : ",") + d.dump();
    return out;
  }
  if (v.is_number_float()) return number_text(v.get<double>());
  return v.dump();
}

void validate_options(const common_options& opts) {
  const auto need = [](bool ok, std::string_view option, const std::string& why) {
    if (!ok) throw usage_error(fmt::format("--{}: {}", option, why));
  };
  const auto& m = opts.measure;
  for (const auto& s : measurement_options()) {
    if (s.name == "max-samples") {
      need(m.max_samples >= m.min_samples && m.max_samples <= s.max, s.name,
           fmt::format("{} must be at least --min-samples ({}) and at most {}", m.max_samples,
                       m.min_samples, number_text(s.max)));
      continue;
    }
    const json v = s.get(opts);
    const char open = s.min_exclusive ? '(' : '[';
    switch (s.kind) {
    case option_kind::integer:
      need(in_range(s, v.get<double>()), s.name,
           fmt::format("{} is out of range ({})", v.dump(), option_range_text(s)));
      break;
    case option_kind::seconds:
      need(in_range(s, v.get<double>()), s.name,
           fmt::format("{} must be a number of seconds in {}{}, {}]", v.get<double>(), open,
                       number_text(s.min), number_text(s.max)));
      break;
    case option_kind::number:
      need(in_range(s, v.get<double>()), s.name,
           fmt::format("{} must be a number in {}{}, {}]", v.get<double>(), open,
                       number_text(s.min), number_text(s.max)));
      break;
    case option_kind::percent:
      need(in_range(s, v.get<double>()), s.name,
           fmt::format("{}% must be in {}{}, {}]", v.get<double>(), open, number_text(s.min),
                       number_text(s.max)));
      break;
    default: break;
    }
  }
  need(!m.warm || !m.l2_flush || *m.l2_flush == l2_flush_mode::none, "warm",
       fmt::format("means --l2-flush none; it conflicts with --l2-flush {} (give one of them)",
                   m.l2_flush ? to_string(*m.l2_flush) : ""));
}

std::vector<std::string> no_effect_notes(const common_options& opts,
                                         const std::function<bool(const option_spec&)>& given) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_condition; // in table order
  for (const auto& s : measurement_options()) {
    if (!s.no_effect) continue;
    const bool set = given(s) || (s.kind != option_kind::devices && option_is_set(s, opts));
    if (!set) continue;
    std::string condition = s.no_effect(opts);
    if (condition.empty()) continue;
    auto it = std::find_if(by_condition.begin(), by_condition.end(),
                           [&](const auto& c) { return c.first == condition; });
    if (it == by_condition.end())
      it = by_condition.emplace(by_condition.end(), condition, std::vector<std::string>{});
    it->second.push_back("--" + s.name);
  }
  std::vector<std::string> notes;
  notes.reserve(by_condition.size());
  for (const auto& [condition, names] : by_condition)
    notes.push_back(no_effect_note(names, condition));
  return notes;
}

std::string no_effect_note(const std::vector<std::string>& names, std::string_view condition) {
  return fmt::format("{} {} no effect {}", fmt::join(names, ", "),
                     names.size() == 1 ? "has" : "have", condition);
}

} // namespace gpubench
