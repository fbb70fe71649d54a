// gpubench compare BASE NEW (or --base FILE... --new FILE...): the regression gate
// (docs/compare.md, docs/ci.md).
#include "commands.hpp"
#include "html_page.hpp"

#include "gpubench/report/multi_gpu_report.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/gate/compare.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <cctype>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>

namespace gpubench::app {
namespace {

struct compare_args {
  std::vector<std::string> positional;
  std::vector<std::string> base_paths;
  std::vector<std::string> new_paths;
  std::string threshold = "5%";
  double alpha = 0.10;
  std::string same_margin;
  std::string run_noise = "10%";
  std::string host_threshold;
  std::string host_bound_threshold;
  std::string gate; ///< --gate, comma-separated (a repeated --gate is joined with commas)
  std::string min_compared = "90%";
  bool allow_device_mismatch = false;
  bool force = false;
  std::string clock;
  output_choice output;
  std::string junit_path;
  CLI::Option* junit_option = nullptr;
};

/// "1st", "2nd", "3rd", "11th": the position of a file on its side, for messages.
std::string ordinal(std::size_t n) {
  const std::size_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return fmt::format("{}{}", n, suffix);
}

/// The classes of rows `--gate` asked for, beyond the GPU rows that are always gated.
struct gate_request {
  bool host = false;
  bool host_bound = false;
};

gate_request parse_gate(const std::string& text) {
  gate_request g;
  if (text.empty()) return g;
  std::vector<std::string> values{""};
  for (const char ch : text) {
    if (ch == ',')
      values.emplace_back();
    else
      values.back() += ch;
  }
  for (const auto& typed : values) {
    std::string v = typed; // any case matches; the message echoes what was typed
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "gpu") continue;
    if (v == "host" || v == "all") g.host = true;
    if (v == "host-bound" || v == "all") g.host_bound = true;
    if (v != "host" && v != "host-bound" && v != "all")
      throw usage_error(
          fmt::format("--gate: '{}' is not one of gpu, host, host-bound, all", clip(typed)));
  }
  return g;
}

/// Each class of rows has its threshold: GPU rows --threshold; host-clock rows, when gated, their
/// own (--host-threshold, default 25%), and host-bound rows theirs (--host-bound-threshold,
/// default 60%). Giving a class's threshold gates it; so does --clock host for the host clock,
/// unless --gate says otherwise (a gate of nothing would always pass).
void set_gates(compare_options& opts, const compare_args& a) {
  const auto asked = parse_gate(a.gate);
  const bool host =
      asked.host || !a.host_threshold.empty() || (a.gate.empty() && a.clock == "host");
  const bool host_bound = asked.host_bound || !a.host_bound_threshold.empty();
  if (host)
    opts.host_threshold = a.host_threshold.empty()
                              ? default_host_threshold
                              : parse_percentage(a.host_threshold, "--host-threshold");
  if (host_bound)
    opts.host_bound_threshold =
        a.host_bound_threshold.empty()
            ? default_host_bound_threshold
            : parse_percentage(a.host_bound_threshold, "--host-bound-threshold");
}

/// Refuses a file given twice on one side: each file is one independent run, so a repeat would
/// count the same samples again and narrow the interval with no new data (the gate could flip).
void refuse_repeated_files(const std::vector<std::string>& paths, const char* side) {
  const auto dup = first_duplicate(paths);
  if (!dup) return;
  const auto& [i, j] = *dup;
  const std::string which = paths[i] == paths[j]
                                ? fmt::format("'{}' is given twice", clip(paths[i], 200))
                                : fmt::format("'{}' and '{}' are the same file",
                                              clip(paths[i], 200), clip(paths[j], 200));
  throw usage_error(fmt::format("{}: {} (its {} and {} files); each file is one run, and a "
                                "repeated file would count the same samples as another run. "
                                "Give each run once",
                                side, which, ordinal(i + 1), ordinal(j + 1)));
}

const char* const compare_help = R"(
Each measurement present on both sides is judged by the interval of its shift: the Hodges-Lehmann
shift of the log times with its distribution-free (Mann-Whitney) interval, from the per-run
medians when each side has 2 or more runs (files, or repeat tags in a file), from the samples of
the one run otherwise:
  slower/faster  the whole interval beyond the threshold (one run on a side: threshold + run noise)
  same           the whole interval within +-same margin (default half the threshold)
  inconclusive   anything else
Exit 1 only when a gated measurement is "slower"; exit 2 when less than --min-compared of BASE was
compared, or the sides ran on different GPUs/drivers/telemetry flags (unless --force).
Gated by default: GPU-clock measurements that are not host-bound (--threshold). Host-clock rows
(CPU references, wall-clock times) and host-bound rows (the GPU waited on the host) are judged and
shown, marked "not gated", unless --gate asks for them:
  --gate host        also gate host-clock rows, at --host-threshold (default 25%)
  --gate host-bound  also gate host-bound rows, at --host-bound-threshold (default 60%)
  --gate all         both; --gate gpu is the default
Giving --host-threshold or --host-bound-threshold gates that class too; --clock host (judge only
host-clock rows) gates them unless --gate is given. See docs/compare.md and docs/ci.md.

Examples:
  gpubench compare baseline.json new.json
  gpubench compare --base base-*.json --new new-*.json --threshold 5%
  gpubench compare base.json new.json --gate host --host-threshold 15%
  gpubench compare baseline.json new.json --format md --junit compare.xml
  gpubench compare baseline.json new.json --format html --output compare.html
  scripts/ab-gate.sh build-main/app/gpubench build/app/gpubench configs/ci-smoke.json 5
)";

} // namespace

namespace {

/// The two sides' files: BASE NEW, or --base FILE... --new FILE....
std::pair<std::vector<std::string>, std::vector<std::string>> sides_of(const compare_args& a) {
  std::vector<std::string> base_paths = a.base_paths;
  std::vector<std::string> new_paths = a.new_paths;
  if (!a.positional.empty()) {
    if (!base_paths.empty() || !new_paths.empty())
      throw usage_error("give BASE NEW or --base FILE... --new FILE..., not both");
    if (a.positional.size() != 2)
      throw usage_error("compare needs BASE NEW (or --base FILE... --new FILE...)");
    base_paths = {a.positional[0]};
    new_paths = {a.positional[1]};
  }
  if (base_paths.empty() || new_paths.empty())
    throw usage_error("compare needs a baseline and a candidate: BASE NEW, or --base FILE... "
                      "--new FILE...");
  return {base_paths, new_paths};
}

/// The judging options: thresholds, margins, --alpha, --clock and the gated classes.
compare_options options_of(compare_args& a) {
  compare_options opts;
  opts.threshold = parse_percentage(a.threshold, "--threshold");
  opts.alpha = a.alpha;
  if (!a.same_margin.empty()) opts.same_margin = parse_percentage(a.same_margin, "--same-margin");
  opts.run_noise = parse_percentage(a.run_noise, "--run-noise");
  opts.min_compared = parse_percentage(a.min_compared, "--min-compared");
  if (opts.min_compared > 1)
    throw usage_error(fmt::format("--min-compared: '{}' is more than 100%", a.min_compared));
  opts.allow_device_mismatch = a.allow_device_mismatch;
  opts.force = a.force;
  std::string clock = a.clock; // any case matches; the message echoes what was typed
  for (char& c : clock) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!clock.empty() && clock != "gpu" && clock != "host")
    throw usage_error(fmt::format("--clock: '{}' is not gpu or host", clip(a.clock)));
  opts.clock = clock;
  a.clock = clock; // set_gates reads it
  set_gates(opts, a);
  return opts;
}

/// Before anything is read: --junit is a file, no run is given twice on a side, and no output
/// would replace an input or the other output.
void check_files(const compare_args& a, const std::vector<std::string>& base_paths,
                 const std::vector<std::string>& new_paths) {
  // --junit "" (an unset variable) is refused as --output "" is; "-" is not stdout here.
  if (a.junit_option->count() > 0) {
    if (a.junit_path == "-")
      throw usage_error("--junit: '-' is not a file; the JUnit report goes to a file (stdout "
                        "has the comparison)");
    check_output_path(a.junit_path, "--junit");
  }
  if (base_paths.size() > 1) refuse_repeated_files(base_paths, "--base");
  if (new_paths.size() > 1) refuse_repeated_files(new_paths, "--new");
  std::vector<named_input> inputs;
  inputs.reserve(base_paths.size() + new_paths.size());
  for (const auto& p : base_paths) inputs.push_back({"BASE result file", p});
  for (const auto& p : new_paths) inputs.push_back({"NEW result file", p});
  check_output_is_not_an_input(a.output.output_path, "--output", inputs);
  check_output_is_not_an_input(a.junit_path, "--junit", inputs);
  if (!a.junit_path.empty() && !a.output.output_path.empty() && a.output.output_path != "-" &&
      same_file(a.junit_path, a.output.output_path))
    throw usage_error(fmt::format("--junit {}: is the same file as --output {}; give them "
                                  "different files",
                                  clip(a.junit_path, 200), clip(a.output.output_path, 200)));
}

std::vector<result_file> load_side(const std::vector<std::string>& paths) {
  std::vector<result_file> side;
  side.reserve(paths.size());
  for (const auto& p : paths) side.push_back(load_result_file(p));
  return side;
}

/// The JUnit report, then --output (the page with html), then stdout: a closed pipe must not cost
/// the files.
void deliver_comparison(const compare_args& a, const comparison& c,
                        const std::optional<html_plan>& html, const output_formats& formats,
                        const std::vector<std::string>& base_paths,
                        const std::vector<std::string>& new_paths) {
  if (!a.junit_path.empty()) {
    std::ostringstream xml;
    write_junit(xml, c);
    write_file_atomically(a.junit_path, xml.str(), "--junit");
  }
  const auto render = [&c](output_format f) {
    std::ostringstream text;
    write_comparison(text, c, f);
    return text.str();
  };
  if (!html) {
    deliver(
        a.output.output_path, [&] { return render(formats.file); },
        [&] { return render(formats.out); });
    return;
  }
  html_job job;
  job.kind = "compare";
  job.base = base_paths;
  job.fresh = new_paths;
  {
    const output_width_scope page_width(120); // a page, not this terminal
    job.terminal = render(output_format::table);
  }
  job.comparison_json = render(output_format::json);
  std::string page = render_html_page(job);
  deliver(
      html->path, [&] { return page; },
      [&] { return html->text_to_stdout ? render(formats.out) : std::string(); });
}

} // namespace

void add_compare_command(CLI::App& app, cli_state& state) {
  auto args = std::make_shared<compare_args>();
  CLI::App* cmd =
      app.add_subcommand("compare", "Compare saved results (one or more runs a side): the "
                                    "regression gate");
  // CLI11 2.4 refuses a positional name with a space: the name is one word, --help shows both.
  cmd->add_option("files", args->positional,
                  "Baseline result and result to judge (JSON from --output); or use --base/--new")
      ->type_name("BASE NEW")
      ->expected(0, 2);
  // allow_extra_args: "--base a.json b.json c.json" takes every file up to the next option.
  cmd->add_option("--base", args->base_paths, "Baseline runs: one or more result files")
      ->type_name("FILE")
      ->allow_extra_args();
  cmd->add_option("--new", args->new_paths, "Candidate runs: one or more result files")
      ->type_name("FILE")
      ->allow_extra_args();
  // The options in percent ("5%" or 0.05), read by parse_percentage() in the callback.
  const std::initializer_list<std::tuple<const char*, std::string*, const char*>> percentages{
      {"--threshold", &args->threshold,
       "Slowdown that fails the gate on GPU rows, in percent (default 5%)"},
      {"--same-margin", &args->same_margin,
       "Equivalence margin of 'same', in percent (default half the threshold)"},
      {"--run-noise", &args->run_noise,
       "Added to the threshold when a side has one run (default 10%)"},
      {"--host-threshold", &args->host_threshold,
       "Gate host-clock measurements at this threshold (with --gate host: 25%)"},
      {"--host-bound-threshold", &args->host_bound_threshold,
       "Gate host-bound measurements at this threshold (with --gate host-bound: 60%)"},
      {"--min-compared", &args->min_compared,
       "Share of BASE's measurements that must be compared, else exit 2 (default 90%)"},
  };
  for (const auto& [name, text, help] : percentages)
    cmd->add_option(name, *text, help)->type_name("PCT");
  cmd->add_option("--alpha", args->alpha,
                  "Error of the two-sided interval (default 0.10: 90% intervals, 5% per verdict)")
      ->type_name("FLOAT");
  cmd->add_flag("--allow-device-mismatch", args->allow_device_mismatch,
                "Compare results measured on different GPU models");
  cmd->add_flag(
      "--force", args->force,
      "Compare despite different GPUs, drivers or telemetry flags (noted as warnings), or "
      "multi-GPU jobs of different shapes (rank count, nodes, GPUs)");
  cmd->add_option("--gate", args->gate,
                  "Also gate host, host-bound or all rows (default gpu: GPU-clock rows only)")
      ->type_name("{gpu|host|host-bound|all}")
      ->check(non_empty_text)
      // A string, not a list, so that "--gate host BASE NEW" leaves the files positional; a
      // repeated --gate is joined to the comma-separated form.
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  cmd->add_option("--clock", args->clock,
                  "Judge only measurements on this clock: gpu or host (default: both)")
      ->type_name("{gpu|host}")
      ->check(non_empty_text);
  add_output_options(*cmd, args->output,
                     "Output: table (default), md, json, csv, or html (a page, with --output)",
                     "the comparison");
  args->junit_option =
      cmd->add_option("--junit", args->junit_path, "Also write the comparison as JUnit XML to FILE")
          ->type_name("FILE");
  cmd->footer(std::string(compare_help) + exit_codes_help);

  cmd->callback([args, &state] {
    // In this order, each error said before the next is looked for: formats, --alpha, the sides,
    // the other options, the files.
    const auto html = html_output(args->output);
    const output_formats formats =
        resolve_output_options(html ? html->rest : args->output, "table, md, json, csv or html");
    if (!(args->alpha > 0 && args->alpha < 1))
      throw usage_error(fmt::format("--alpha: {} is not a probability in (0, 1)", args->alpha));
    const auto [base_paths, new_paths] = sides_of(*args);
    const compare_options opts = options_of(*args);
    check_files(*args, base_paths, new_paths); // nothing is read yet
    const std::vector<result_file> base = load_side(base_paths);
    const std::vector<result_file> candidate = load_side(new_paths);
    // Multi-GPU: a 4-rank job is not a regression of an 8-rank one.
    if (const auto why = job_shape_mismatch(base.front().report, candidate.front().report);
        why && !args->force)
      throw usage_error(*why);
    const comparison c = compare_runs(base, candidate, opts);
    deliver_comparison(*args, c, html, formats, base_paths, new_paths);
    state.exit_code = exit_code_for(c);
    if (state.exit_code == exit_code::usage) {
      std::cerr << fmt::format("gpubench compare: only {} of {} BASE measurements compared "
                               "(at least {:.0f}% required): the files do not match; see "
                               "\"Only in BASE\" and \"Notes\"\n",
                               c.rows.size(), c.base_measurements, 100 * opts.min_compared);
    }
  });
}

} // namespace gpubench::app
