// Options shared by every measuring subcommand, and the one place results leave the program.
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/registry/registry.hpp"
#include "gpubench/results/output.hpp"
#include "gpubench/results/result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

namespace gpubench::app {

const char* const exit_codes_help =
    "Exit codes: 0 success; 1 verification failed (or compare found a significant regression, or\n"
    "check failed a GPU);\n"
    "2 usage or input error; 3 CUDA error during the run (including out of device memory);\n"
    "77 no usable CUDA device (vecadd, augment, stream and run offer --cpu-only);\n"
    "130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP"
    " (results so far are written).";

namespace {

// Hostile input: numeric options are read by the rules run files follow, not by
// CLI11's strtoll/strtold (which take "0x10" and "010" as 16 and 8).
// Every option checked by integer_text is an int: a value past its range is said to be so here,
// before CLI11's own conversion fails with a bare "Could not convert".
const CLI::Validator integer_text(
    [](std::string& t) {
      const std::string shown = clip(t);
      auto why = normalize_integer_text(t, true);
      if (why.empty()) {
        const long long v = std::stoll(t); // normalized: decimal digits that fit 64 bits
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
          why = fmt::format("'{}' is out of range (at most {}; --help gives the option's range)",
                            shown, std::numeric_limits<int>::max());
      }
      return why;
    },
    "");
const CLI::Validator seed_text(
    [](std::string& t) {
      return normalize_integer_text(t, false, "a seed (an integer from 0 to 2^64-1)");
    },
    "");
const CLI::Validator number_text([](std::string& t) { return normalize_number_text(t); }, "");

} // namespace

// An option given with an empty value ("--output-format ''", often an unset shell variable) is
// refused, not read as if it were not given.
const CLI::Validator non_empty_text(
    [](const std::string& t) {
      return t.empty() ? std::string("an empty value; give one, or leave the option out")
                       : std::string();
    },
    "");

// What the command line gave for one subcommand's common options, as CLI11 parsed it: the text of
// options that need more than CLI11's conversion, and each option, to ask whether it was given.
struct given_options {
  std::string format = "table";
  bool quiet = false;
  bool verbose = false;
  // --output-format: the options whose presence decides the file's format.
  std::string output_format;
  CLI::Option* format_option = nullptr;
  CLI::Option* output_option = nullptr;
  CLI::Option* output_format_option = nullptr;
  // The measurement options (option_table.hpp) as given: text, or a flag's value, by row name;
  // applied in finish_common_options to the rows given on the command line.
  std::map<std::string, std::string, std::less<>> text;
  std::map<std::string, bool, std::less<>> flags;
  std::map<std::string, CLI::Option*, std::less<>> option;
  std::string* device_spec = nullptr;

  /// Whether the measurement option `name` was given on the command line.
  [[nodiscard]] bool on_line(std::string_view name) const {
    const auto it = option.find(name);
    return it != option.end() && it->second->count() > 0;
  }
};

namespace {

bool offered_in(option_group g, const common_option_set& offered) {
  switch (g) {
  case option_group::device: return offered.device;
  case option_group::measurement: return offered.measurement;
  case option_group::inputs: return offered.inputs;
  case option_group::cpu_threads: return offered.cpu_threads;
  case option_group::cpu_only: return offered.cpu_only;
  }
  return false;
}

/// Adds the table's rows of group `g` to `cmd`: each with its type, range, default and help.
void add_table_options(CLI::App& cmd, given_options& raw, option_group g) {
  for (const auto& s : measurement_options()) {
    if (s.group != g) continue;
    const std::string name = "--" + s.name;
    const auto range = option_range_text(s);
    const std::string help = range.empty() ? s.help : fmt::format("{} ({})", s.help, range);
    CLI::Option* o = nullptr;
    if (s.kind == option_kind::flag) {
      o = cmd.add_flag(name, raw.flags[s.name], help);
    } else {
      std::string& target = s.kind == option_kind::devices ? *raw.device_spec : raw.text[s.name];
      target = option_default_text(s);
      o = cmd.add_option(name, target, help)
              ->type_name(option_type_name(s))
              ->default_str(option_default_text(s));
      if (s.kind == option_kind::integer) o->transform(integer_text);
      if (s.kind == option_kind::seconds || s.kind == option_kind::number)
        o->transform(number_text);
      if (s.kind == option_kind::seed) o->transform(seed_text);
    }
    raw.option[s.name] = o;
  }
}

/// The value of row `s` as given on the command line (text already normalized by its validator).
nlohmann::json value_given(const option_spec& s, const given_options& raw) {
  if (s.kind == option_kind::flag) return raw.flags.find(s.name)->second;
  const std::string& text = raw.text.find(s.name)->second;
  switch (s.kind) {
  case option_kind::integer: return std::stoll(text);
  case option_kind::seconds:
  case option_kind::number: {
    double v = 0; // normalized by number_text: a plain decimal (std::stod refuses subnormals)
    std::from_chars(text.data(), text.data() + text.size(), v);
    return v;
  }
  case option_kind::seed: return std::stoull(text);
  case option_kind::percent:
    if (const auto pct = read_percent(text)) return *pct;
    throw usage_error(
        fmt::format("--{}: '{}' is not a percentage (e.g. 1 or 0.5%)", s.name, clip(text)));
  case option_kind::word:
    if (const auto choice = match_choice(s, text)) return *choice;
    throw usage_error(
        fmt::format("--{}: '{}' is not one of {}", s.name, clip(text), fmt::join(s.choices, ", ")));
  default: return text;
  }
}
} // namespace

std::shared_ptr<given_options> add_common_options(CLI::App& cmd, common_options& opts,
                                                  std::string& device_spec,
                                                  const common_option_set& offered) {
  auto given = std::make_shared<given_options>();
  given_options& raw = *given;
  raw.device_spec = &device_spec;
  if (offered.device) add_table_options(cmd, raw, option_group::device);
  if (offered.output) {
    raw.format_option = cmd.add_option("--format", raw.format, "stdout format")
                            ->type_name("{table|json|csv|md}")
                            ->capture_default_str();
    raw.output_option =
        cmd.add_option(
               "--output", opts.output_path,
               "also write the result to FILE (atomic; format from --output-format, else FILE's "
               "extension .json .csv .md .txt, else --format if given, else JSON; - for stdout)")
            ->type_name("FILE");
    raw.output_format_option =
        cmd.add_option("--output-format", raw.output_format,
                       "format of the --output file (default: from FILE's extension, else --format "
                       "if given, else json)")
            ->type_name("{json|table|csv|md}")
            ->check(non_empty_text);
  }
  if (offered.measurement) {
    add_table_options(cmd, raw, option_group::measurement);
    cmd.add_flag("--resume", opts.resume,
                 "continue the run that FILE.journal of --output FILE recorded: keep its points, "
                 "measure the rest (docs/reliability.md)");
  }
  for (const auto g : {option_group::inputs, option_group::cpu_threads, option_group::cpu_only})
    if (offered_in(g, offered)) add_table_options(cmd, raw, g);
  if (offered.logging) {
    cmd.add_flag("-q,--quiet", raw.quiet, "no logs or progress on stderr");
    cmd.add_flag("-v,--verbose", raw.verbose,
                 "more detail on stderr: each point's outcome and time as it finishes");
  }
  return given;
}

namespace {

/// --format, --output and --output-format: the formats of stdout and of the file.
void apply_output_choice(common_options& opts, const given_options& raw) {
  opts.verbosity = raw.quiet ? 0 : raw.verbose ? 2 : 1;
  if (raw.format_option == nullptr) return; // the subcommand writes its own formats
  const auto format = parse_output_format(raw.format);
  if (!format)
    throw usage_error(
        fmt::format("--format: '{}' is not one of table, json, csv, md", clip(raw.format)));
  opts.format = *format;
  // A page is what report and compare write; a benchmark's .html file would get JSON inside.
  if (raw.output_format.empty() &&
      (opts.output_path.ends_with(".html") || opts.output_path.ends_with(".htm")))
    throw usage_error(fmt::format(
        "--output {}: a benchmark writes its result as json, csv, md or txt; for an HTML page, "
        "write the JSON and then run: gpubench report RESULT.json --output {}",
        clip(opts.output_path), clip(opts.output_path)));
  opts.file_format = output_file_format(
      raw.output_format, raw.format_option->count() > 0 ? format : std::nullopt, opts.output_path);
  if (raw.output_option->count() > 0 && opts.output_path.empty())
    check_output_path(opts.output_path); // says that an empty path is an error
}

/// The measurement options given on the command line, over what a run file's "options" set.
void apply_given_measurement_options(common_options& opts, const given_options& raw) {
  std::string unused_spec;
  for (const auto& s : measurement_options())
    if (s.kind != option_kind::devices && raw.on_line(s.name))
      s.set({opts, unused_spec}, value_given(s, raw));
}

/// --max-samples 5 alone asks for at most 5 samples: the default --min-samples follows it down.
/// Returns the note that says so, or "".
std::string lower_min_samples_to_max(common_options& opts, const given_options& raw) {
  if (!raw.on_line("max-samples") || raw.on_line("min-samples") ||
      opts.measure.min_samples != measure_options{}.min_samples || opts.measure.max_samples < 1 ||
      opts.measure.max_samples >= opts.measure.min_samples)
    return {};
  auto note =
      fmt::format("--max-samples {} lowers --min-samples from its default {} to {}",
                  opts.measure.max_samples, opts.measure.min_samples, opts.measure.max_samples);
  opts.measure.min_samples = opts.measure.max_samples;
  return note;
}

/// The GPUs of `device_spec` ("all": every one, which needs a device; none with --cpu-only).
void resolve_devices(common_options& opts, const std::string& device_spec) {
  opts.devices.clear();
  if (const auto listed = parse_device_list(device_spec, "--device")) {
    if (!opts.cpu_only) opts.devices = *listed;
  } else if (!opts.cpu_only) {
    cuda::require_device();
    for (int d = 0; d < cuda::device_count_or_zero(); ++d) opts.devices.push_back(d);
  }
}

} // namespace

void finish_common_options(common_options& opts, const given_options& given,
                           const std::string& device_spec) {
  apply_output_choice(opts, given);
  apply_given_measurement_options(opts, given);
  std::vector<std::string> notes; // printed last, once every option is known to be valid
  notes.push_back(lower_min_samples_to_max(opts, given));
  validate_options(opts);
  if (!opts.output_path.empty()) check_output_path(opts.output_path);
  check_resume(opts, false); // before --concurrent's own checks: it names the reason
  if (opts.concurrent && opts.cpu_only)
    throw usage_error("--concurrent runs GPUs at once; it does not apply to --cpu-only");
  resolve_devices(opts, device_spec);

  // Options that change nothing in this context: noted on stderr once everything is valid (an
  // error stays one line), and the run goes on.
  if (given.output_format_option != nullptr && given.output_format_option->count() > 0 &&
      given.output_option->count() == 0)
    notes.emplace_back("--output-format has no effect without --output (it sets the format of "
                       "the --output file)");
  for (auto& n : no_effect_notes(opts, [&](const option_spec& s) { return given.on_line(s.name); }))
    notes.push_back(std::move(n));
  if (opts.verbosity == 0) return;
  for (const auto& n : notes)
    if (!n.empty()) std::fprintf(stderr, "gpubench: note: %s\n", printable_message(n).c_str());
}

output_format output_file_format(const std::string& output_format_text,
                                 std::optional<output_format> explicit_format,
                                 const std::string& output_path) {
  if (output_format_text.empty()) {
    // A file name that says its format wins over --format: `--format md --output r.json` (a
    // table to read, the record to keep) is how scripts and CI use it.
    const auto dot = output_path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : output_path.substr(dot + 1);
    if (ext == "json") return output_format::json;
    if (ext == "csv") return output_format::csv;
    if (ext == "md") return output_format::md;
    if (ext == "txt") return output_format::table;
    return explicit_format.value_or(output_format::json);
  }
  const auto f = parse_output_format(output_format_text);
  if (!f)
    throw usage_error(fmt::format("--output-format: '{}' is not one of table, json, csv, md",
                                  clip(output_format_text)));
  return *f;
}

void add_output_options(CLI::App& cmd, output_choice& choice, const char* format_help,
                        const char* what) {
  choice.format_option =
      cmd.add_option("--format", choice.format, format_help)->type_name("{table|md|json|csv|html}");
  choice.output_option =
      cmd.add_option(
             "--output", choice.output_path,
             fmt::format(
                 "Also write {} to FILE (format: --output-format, else the extension .json .csv "
                 ".md .txt, else --format, else JSON; - for stdout)",
                 what))
          ->type_name("FILE");
  cmd.add_option("--output-format", choice.output_format,
                 "Format of the --output file: json, table, csv, md, html (a page)")
      ->type_name("{json|table|csv|md|html}")
      ->check(non_empty_text);
}

output_formats resolve_output_options(const output_choice& choice, const char* formats_listed) {
  const auto format = parse_output_format(choice.format);
  if (!format)
    throw usage_error(fmt::format("--format: '{}' is not a format; expected {}",
                                  clip(choice.format), formats_listed));
  const output_format file = output_file_format(
      choice.output_format, choice.format_option->count() > 0 ? format : std::nullopt,
      choice.output_path);
  if (choice.output_option->count() > 0) check_output_path(choice.output_path);
  return {*format, file};
}

namespace {

constexpr std::size_t help_width = 100;

/// `text` with every line longer than `width` wrapped at spaces (a word is never cut); its
/// continuation lines take the line's own indent plus `hang`. Shorter lines are kept as they are
/// (aligned columns in footers stay aligned).
std::string wrap_help(const std::string& text, std::size_t width, std::size_t hang) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (line.size() <= width) {
      out += line;
    } else {
      const auto lead = std::min(line.find_first_not_of(' '), line.size());
      const std::string indent(lead + hang, ' ');
      std::string current(lead, ' ');
      bool empty = true;
      std::istringstream words(line.substr(lead));
      for (std::string w; words >> w;) {
        if (!empty && current.size() + 1 + w.size() > width) {
          out += current + '\n';
          current = indent;
          empty = true;
        }
        current += (empty ? "" : " ") + w;
        empty = false;
      }
      out += current;
    }
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

class wrapping_formatter final : public CLI::Formatter {
public:
  std::string make_option_desc(const CLI::Option* o) const override {
    return wrap_help(CLI::Formatter::make_option_desc(o), help_width - get_column_width(), 0);
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true),
                             wrap_help(sub->get_description(), help_width - get_column_width(), 0),
                             get_column_width());
    return out.str();
  }
  std::string make_description(const CLI::App* app) const override {
    return wrap_help(CLI::Formatter::make_description(app), help_width, 0);
  }
  std::string make_footer(const CLI::App* app) const override {
    return wrap_help(CLI::Formatter::make_footer(app), help_width, 2);
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    // CLI11 2.1 writes a positional that takes 0 to N values as "files(0x)": say "files...".
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    for (auto at = usage.find("(0x)"); at != std::string::npos; at = usage.find("(0x)"))
      usage.replace(at, 4, "...");
    return wrap_help(usage, help_width, 4);
  }
};

} // namespace

void install_help_format(CLI::App& app) { app.formatter(std::make_shared<wrapping_formatter>()); }

int emit_report(const run_report& report, const common_options& opts) {
  // Points that did not run are in the report, but a person watching stderr should hear of them.
  for (const auto& r : report.results)
    if (r.status == result_status::skipped || r.status == result_status::error)
      std::fprintf(stderr, "gpubench: %s\n",
                   printable_message(
                       fmt::format("{} point {}: {}", r.benchmark, to_string(r.status), r.reason))
                       .c_str());
  // The file first: it is the complete record, and stdout may be a closed pipe.
  const auto render = [&report](output_format f) {
    std::ostringstream text;
    write_report(text, report, f, summary_tables());
    return std::move(text).str(); // the buffer itself: a long sweep's file is megabytes
  };
  deliver_streamed(
      opts.output_path,
      [&](std::ostream& os) { write_report(os, report, opts.file_format, summary_tables()); },
      [&] { return render(opts.format); });
  return exit_code_for(report);
}

} // namespace gpubench::app
