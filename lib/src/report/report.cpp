#include "gpubench/report/report.hpp"

#include "gpubench/report/multi_gpu_report.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/telemetry/energy.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

namespace gpubench {

using nlohmann::json;

std::optional<output_format> parse_output_format(std::string_view text) noexcept {
  std::string s;
  for (const char c : text) s += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (s == "table") return output_format::table;
  if (s == "json") return output_format::json;
  if (s == "csv") return output_format::csv;
  if (s == "md") return output_format::md;
  return std::nullopt;
}

std::string format_seconds(double s) {
  if (!(s > 0)) return "0 s";
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

namespace {
std::string scaled(double v, std::string_view unit) {
  static constexpr std::pair<double, const char*> prefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [f, p] : prefixes)
    if (std::abs(v) >= f) return fmt::format("{:.3g} {}{}", v / f, p, unit);
  return unit.empty() ? fmt::format("{:.3g}", v) : fmt::format("{:.3g} {}", v, unit);
}
} // namespace

std::string format_bytes_per_s(double bps) { return scaled(bps, "B/s"); }
std::string format_bytes(double bytes) { return scaled(bytes, "B"); }
std::string format_rate(double per_s, std::string_view unit) {
  return scaled(per_s, fmt::format("{}/s", unit));
}

std::string verification_word(const verification& v) {
  if (!v.performed) return "not performed";
  return v.passed ? "passed" : "FAILED";
}

namespace {

std::string params_line(const json& params) { return params_text(params); }

/// The width the table's text lines keep to: the output's, less the indent of their
/// continuation lines.
std::size_t table_width() { return output_width() - 4; }

std::string device_label(const run_report& rep, int id) {
  if (id < 0) return "CPU only";
  for (const auto& d : rep.devices)
    if (d.info.id == id) return fmt::format("GPU {} {}", id, d.info.name);
  return fmt::format("GPU {}", id);
}

double rate(const measurement& m, const char* key) {
  const auto it = m.rates.find(key);
  return it != m.rates.end() && it->is_number() ? it->get<double>() : -1;
}

std::string peak_text(const measurement& m) {
  const double theor = rate(m, "fraction_of_theoretical_peak");
  const double meas = rate(m, "fraction_of_measured_peak");
  // "90.2% (101.9%)" under the header "of peak (D2D)": of the theoretical peak, then of the
  // measured device-to-device copy.
  std::string out;
  if (theor >= 0) out = fmt::format("{:.1f}%", theor * 100);
  if (meas >= 0) out += fmt::format("{}({:.1f}%)", out.empty() ? "" : " ", meas * 100);
  return out;
}

std::string derived_value(const std::string& key, const json& v) {
  if (!v.is_number()) return param_text(v);
  const double x = v.get<double>();
  if (key.find("speedup") != std::string::npos) return fmt::format("{:.2f}x", x);
  if (key.find("fraction") != std::string::npos || key.find("efficiency") != std::string::npos)
    return fmt::format("{:.1f}%", x * 100);
  if (key.ends_with("_s") && !key.ends_with("per_s")) return format_seconds(x);
  // Rates and counts as the table shows them ("1.42 M images/s", not 1.418e+06).
  const auto unit_before = [&key](std::string_view tail) {
    const std::string head = key.substr(0, key.size() - tail.size());
    const auto underscore = head.rfind('_');
    std::string unit = underscore == std::string::npos ? head : head.substr(underscore + 1);
    if (unit == "flops") unit = "FLOP";
    return unit;
  };
  if (key.ends_with("_per_s")) return fmt::format("{} {}/s", scaled(x, ""), unit_before("_per_s"));
  if (key.ends_with("_per_step"))
    return fmt::format("{} {}/step", scaled(x, ""), unit_before("_per_step"));
  return fmt::format("{:.4g}", x);
}

/// The clock column: gpu (CUDA events) or ts (the GPU's own kernel timestamps), with /d when L2
/// was flushed by writing (--l2-flush write) and /w when it was not flushed; host otherwise.
std::string clock_text(const measurement& m) {
  if (m.clock != clock_kind::gpu) return "host";
  const std::string source = m.timing == gpu_timing::timestamps ? "ts" : "gpu";
  if (m.l2_flush == l2_flush_mode::write) return source + "/d";
  return m.cold ? source : source + "/w";
}

/// The stop column: why sampling ended (legend under the table); yes/no for older files.
std::string stop_text(const measurement& m) {
  if (!m.stopped) return m.converged ? "yes" : "no";
  switch (*m.stopped) {
  case stop_reason::noise: return "noise";
  case stop_reason::stable: return "stable";
  case stop_reason::entropy: return "entropy";
  case stop_reason::max_samples: return "max-n";
  case stop_reason::timeout: return "timeout";
  case stop_reason::interrupted: return "intr";
  }
  return "?";
}

/// A row's name with its marks, as every table shows it: '*' telemetry flagged (thermal, hw
/// slowdown, contention), '^' host-bound (the host's launches paced the GPU).
std::string marked_name(const measurement& m) {
  std::string marks = telemetry_flagged(m.telemetry) ? "*" : "";
  if (m.host_bound) marks += "^";
  return marks.empty() ? m.name : m.name + " " + marks;
}

/// The stop reasons (stop_text) that mean a limit, not the stopping rule, ended sampling.
constexpr std::array<std::string_view, 3> limit_stops{"max-n", "timeout", "intr"};
bool limit_stop(std::string_view stop) {
  return stop == "no" ||
         std::find(limit_stops.begin(), limit_stops.end(), stop) != limit_stops.end();
}

/// The rel.sd column: "-" under two samples (one sample says nothing about repeatability; a
/// --timeout shorter than a sample ends sampling there, and the stop column says so).
std::string rel_sd_text(const measurement& m) {
  return m.stats.count < 2 ? std::string("-") : fmt::format("{:.1f}%", m.stats.rel_stddev * 100);
}

/// A note under a table, indented two spaces and wrapped at spaces to fit the output's width,
/// its continuation lines indented four.
void write_note(std::ostream& os, const std::string& text) {
  write_wrapped(os, text, output_width(), "  ", "    ");
}

/// The note of a measurement whose --reject-throttled discarded samples ("" when none was).
std::string throttled_line(const nlohmann::json& t) {
  const auto dropped = t.value("rejected", std::size_t{0});
  if (dropped == 0) return {};
  return fmt::format("throttled: {} of {} samples discarded (SM clock on the GPU below {:g}% of "
                     "its running median, {:.0f} MHz; --reject-throttled)",
                     dropped, dropped + t.value("kept", std::size_t{0}),
                     t.value("fraction", 0.0) * 100, t.value("median_sm_clock_mhz", 0.0));
}

/// Telemetry lines under a result's rows: the first GPU measurement's always (or that it is
/// unavailable, once), every flagged one's, and energy where measured.
void write_what_the_gpu_did(std::ostream& os, const result& r) {
  bool first = true;
  for (const auto& m : r.measurements) {
    if (m.telemetry.empty()) continue;
    const bool available = m.telemetry.value("available", false);
    if (first || (available && telemetry_flagged(m.telemetry)))
      write_note(os, fmt::format("{}{}", available ? fmt::format("[{}] ", m.name) : "",
                                 telemetry_line(m.telemetry)));
    first = false;
  }
  for (const auto& m : r.measurements)
    if (const auto line = throttled_line(m.throttled); !line.empty())
      write_note(os, fmt::format("[{}] {}", m.name, line));
  for (const auto& m : r.measurements)
    if (!m.energy.empty()) write_note(os, fmt::format("[{}] {}", m.name, energy_line(m.energy)));
  for (const auto& m : r.measurements)
    if (!m.description.empty()) write_note(os, fmt::format("[{}] is {}", m.name, m.description));
}

std::string verification_line(const verification& v) {
  if (!v.performed) return "not performed";
  return fmt::format("{}: {}, {} of {} elements within tolerance ({:.4f}%), max |error| {:.3g}",
                     v.passed ? "PASSED" : "FAILED", v.method, v.checked - v.mismatches, v.checked,
                     v.within_tolerance_fraction() * 100, v.max_abs_error);
}

/// Columns that no row fills leave the table; so do the clock, n and stop columns of a table of
/// several rows where they say the same on every row, said once above it instead ("every row: clock
/// gpu, n 12, stop noise"), so that the table fits a terminal.
void say_constant_columns_once(std::ostream& os, text_table& t) {
  // A column no row fills (no peak, no rate) says nothing.
  for (std::size_t c = t.header.size(); c-- > 1;)
    if (constant_column(t, c) && t.rows.front()[c].empty()) erase_column(t, c);
  if (t.rows.size() < 2) return;
  std::vector<std::string> said;
  for (const std::string_view name : {"stop", "n", "clock"}) {
    const auto c = static_cast<std::size_t>(std::find(t.header.begin(), t.header.end(), name) -
                                            t.header.begin());
    if (!constant_column(t, c)) continue;
    said.insert(said.begin(), fmt::format("{} {}", name, t.rows.front()[c]));
    erase_column(t, c);
  }
  if (!said.empty()) write_note(os, fmt::format("every row: {}", fmt::join(said, ", ")));
}

void write_result_block(std::ostream& os, const run_report& rep, const result& r) {
  // Long parameter lists (augment has 14) wrap at spaces to fit a terminal; JSON has them whole.
  const auto head = wrap_words(fmt::format("{} | {} | {}", r.benchmark, params_line(r.params),
                                           device_label(rep, r.device) + rank_suffix(r)),
                               table_width());
  for (std::size_t i = 0; i < head.size(); ++i) os << (i == 0 ? "" : "    ") << head[i] << '\n';
  if (r.status == result_status::skipped || r.status == result_status::error) {
    write_note(os, fmt::format("{}: {}", to_string(r.status), r.reason));
    os << '\n';
    return;
  }
  // The shared table writer, indented two spaces.
  text_table t;
  t.header = {"measurement", "clock", "median",    "min",  "rel.sd",
              "n",           "stop",  "bandwidth", "rate", "of peak (D2D)"};
  t.right = {false, false, true, true, true, true, true, true, true, false};
  t.width = output_width() - 2; // written indented two spaces
  // One item unit for every row with a rate (the usual case): said in the header, not in every
  // cell ("elements/s" over "348 G").
  std::set<std::string> units;
  for (const auto& m : r.measurements)
    if (rate(m, "items_per_s") > 0) units.insert(m.work.item_unit);
  const bool one_unit = units.size() == 1;
  if (one_unit) t.header[8] = *units.begin() + "/s";
  for (const auto& m : r.measurements) {
    const double bps = rate(m, "bytes_per_s");
    const double ips = rate(m, "items_per_s");
    const std::string name = marked_name(m);
    // gpu: CUDA events; ts: the GPU's own kernel timestamps (--timestamps); /w: not flushed;
    // /d: flushed by writing (dirty lines, --l2-flush write).
    t.rows.push_back({name, clock_text(m), format_seconds(m.stats.median),
                      format_seconds(m.stats.min), rel_sd_text(m), std::to_string(m.stats.count),
                      stop_text(m), bps > 0 ? format_bytes_per_s(bps) : "",
                      ips <= 0   ? ""
                      : one_unit ? scaled(ips, "")
                                 : format_rate(ips, m.work.item_unit),
                      peak_text(m)});
  }
  say_constant_columns_once(os, t);
  std::ostringstream rows;
  write_text_table(rows, t);
  std::istringstream lines(rows.str());
  for (std::string line; std::getline(lines, line);)
    os << (line.empty() ? "" : "  ") << line << '\n';
  write_what_the_gpu_did(os, r);
  for (const auto& [k, v] : r.derived.items())
    write_note(os, fmt::format("{}: {}", k, derived_value(k, v)));
  write_note(os, "verification: " + verification_line(r.verify));
  os << '\n';
}

/// What a table shows, for its legend: the clocks and stop reasons of its rows, and the marks set.
struct table_contents {
  std::set<std::string> clocks;
  std::set<std::string> stops;
  bool flagged = false;
  bool host_bound = false;
  bool not_run = false;
  bool peak = false;
  bool any = false;
  bool one_sample = false;
};

table_contents contents_of(const run_report& rep) {
  table_contents t;
  for (const auto& r : rep.results) {
    if (r.status == result_status::skipped || r.status == result_status::error) t.not_run = true;
    for (const auto& m : r.measurements) {
      t.any = true;
      t.one_sample = t.one_sample || m.stats.count < 2;
      t.clocks.insert(clock_text(m));
      t.stops.insert(stop_text(m));
      t.flagged = t.flagged || telemetry_flagged(m.telemetry);
      t.host_bound = t.host_bound || m.host_bound;
      t.peak = t.peak || !peak_text(m).empty();
    }
  }
  return t;
}

/// Each clock column's text and its legend entry, in the legend's order.
constexpr std::pair<std::string_view, std::string_view> clock_legend[] = {
    {"gpu", "gpu = CUDA events, L2 flushed by reading before each sample"},
    {"gpu/d", "gpu/d = CUDA events, L2 flushed by writing (--l2-flush write)"},
    {"ts/d", "ts/d = kernel timestamps, L2 flushed by writing"},
    {"gpu/w", "gpu/w = CUDA events, L2 not flushed (--warm)"},
    {"ts", "ts = the GPU's own kernel timestamps"},
    {"ts/w", "ts/w = the GPU's kernel timestamps, L2 not flushed"},
    {"host", "host = the host's steady clock"},
};

/// Each converged stop reason's legend entry (the limits share one entry, below).
constexpr std::pair<std::string_view, std::string_view> stop_legend[] = {
    {"noise", "noise = stopped at rel.sd <= --max-noise"},
    {"stable", "stable = stopped with the mean's 95% interval within max-noise/4"},
    {"entropy", "entropy = stopped when the samples' entropy stopped growing"},
};

/// The legend under a table explains what that table shows and nothing else: the clocks its
/// rows use, the stop reasons that occur, the marks that were set, the peak column where filled.
/// The whole legend is in `gpubench --help` (table_legend_help) and docs/usage.md.
std::vector<std::string> legend_items(const run_report& rep) {
  const table_contents t = contents_of(rep);
  std::vector<std::string> items;
  if (!t.any && !t.not_run) return items;
  const auto has = [](const std::set<std::string>& s, std::string_view k) {
    return s.count(std::string(k)) > 0;
  };
  for (const auto& [clock, text] : clock_legend)
    if (has(t.clocks, clock)) items.emplace_back(text);
  if (t.any) items.emplace_back("rel.sd = relative standard deviation; n = samples");
  if (t.one_sample) items.emplace_back("rel.sd - = one sample, no spread to show");
  if (t.peak) items.emplace_back("of peak (D2D) = % of the theoretical (measured copy) bandwidth");
  for (const auto& [stop, text] : stop_legend)
    if (has(t.stops, stop)) items.emplace_back(text);
  std::vector<std::string> limits;
  for (const auto k : limit_stops)
    if (has(t.stops, k)) limits.emplace_back(k);
  if (!limits.empty())
    items.push_back(fmt::format("{} = a limit ended sampling (not converged: more --max-samples or "
                                "--timeout, or a quieter machine; docs/methodology.md)",
                                fmt::join(limits, ", ")));
  if (has(t.stops, "yes"))
    items.emplace_back("stop yes = converged (an older file, which names no stop reason)");
  if (has(t.stops, "no")) items.emplace_back("stop no = not converged (an older file)");
  if (t.flagged)
    items.emplace_back("* = telemetry flagged (thermal, hw slowdown, another process)");
  if (t.host_bound) items.emplace_back("^ = host-bound: the host's launches paced the GPU");
  if (t.not_run) items.emplace_back("skipped/error = did not run, reason given");
  return items;
}

void write_legend(std::ostream& os, const run_report& rep) {
  const auto items = legend_items(rep);
  if (items.empty()) return;
  const auto lines = wrap_words(fmt::format("Legend: {}", fmt::join(items, "; ")), table_width());
  for (std::size_t i = 0; i < lines.size(); ++i) os << (i == 0 ? "" : "  ") << lines[i] << '\n';
}

} // namespace

const char* const table_legend_help =
    "Table columns: clock gpu = CUDA events with L2 flushed by reading before each sample\n"
    "  (gpu/d = flushed by writing, --l2-flush write; gpu/w = not flushed, --warm), ts = the GPU's "
    "own kernel timestamps (--timestamps), host = the host's steady\n"
    "  clock; rel.sd = relative standard deviation; n = samples; of peak (D2D) = % of the\n"
    "  theoretical peak bandwidth (of the measured device-to-device copy); stop: noise = rel.sd\n"
    "  <= --max-noise, stable = the trimmed mean's 95% interval within +-max-noise/4, max-n,\n"
    "  timeout, intr = a limit ended sampling (not converged). Marks: * = telemetry flagged\n"
    "  (thermal, hw slowdown or another process on the GPU); ^ = host-bound (timed with its\n"
    "  launches, and the host's enqueue paced the GPU: the figure moves with host speed).\n"
    "  A skipped or error point states its reason. Each table's legend names only what it shows.\n";

void write_table(std::ostream& os, const run_report& rep, const summary_writers& summaries) {
  if (rep.meta.incomplete) {
    write_wrapped(os, "INCOMPLETE RUN: " + rep.meta.incomplete_reason, output_width(), "", "  ");
    os << '\n';
  }
  std::map<std::string, std::vector<const result*>> by_benchmark;
  for (const auto& r : rep.results) {
    write_result_block(os, rep, r);
    by_benchmark[r.benchmark].push_back(&r);
  }
  for (const auto& [name, results] : by_benchmark)
    if (const auto it = summaries.find(name);
        it != summaries.end() && it->second && !results.empty())
      it->second(os, results);
  write_legend(os, rep);
}

namespace {

std::vector<std::string> param_columns(const run_report& rep) {
  std::set<std::string> seen;
  std::vector<std::string> cols;
  for (const auto& r : rep.results)
    for (const auto& [k, v] : r.params.items())
      if (seen.insert(k).second) cols.push_back(k);
  return cols;
}

/// Text from a result file may be anything (CSV injection): through csv_text. Numbers as they are.
std::string csv_field(const std::string& s) { return csv_text(s); }
std::string csv_value(const json& v) {
  return v.is_string() ? csv_text(v.get<std::string>()) : csv_plain(param_text(v));
}

std::string rate_field(const measurement& m, const char* key) {
  const double v = rate(m, key);
  return v >= 0 ? fmt::format("{:.6g}", v) : "";
}

} // namespace

void write_csv(std::ostream& os, const run_report& rep) {
  const auto cols = param_columns(rep);
  os << "benchmark,device,status";
  for (const auto& c : cols) os << ',' << csv_field(c);
  os << ",measurement,clock,cold,converged,samples,min_s,median_s,mean_s,max_s,stddev_s,"
        "rel_stddev,bytes,items,item_unit,bytes_per_s,items_per_s,verified,run_incomplete,"
        "incomplete_reason\n";
  // CSV has no place for a note: every row says whether its run was cut short (a signal, a
  // sticky CUDA error), so an interrupted sweep never reads as a complete, shorter one.
  const std::string run_state =
      rep.meta.incomplete ? "true," + csv_field(rep.meta.incomplete_reason) : "false,";
  for (const auto& r : rep.results) {
    std::string prefix =
        fmt::format("{},{},{}", csv_field(r.benchmark), r.device, to_string(r.status));
    for (const auto& c : cols)
      prefix += "," + (r.params.contains(c) ? csv_value(r.params[c]) : std::string());
    const std::string verified = !r.verify.performed ? "" : r.verify.passed ? "true" : "false";
    if (r.measurements.empty())
      os << prefix << ",,,,,,,,,,,,,,,,," << verified << ',' << run_state << '\n';
    for (const auto& m : r.measurements) {
      const auto& s = m.stats;
      os << prefix
         << fmt::format(",{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.6g},{:.17g},{:.17g},"
                        "{},{},{},{},{}\n",
                        csv_field(m.name), m.clock == clock_kind::gpu ? "gpu" : "host", m.cold,
                        m.converged, s.count, s.min, s.median, s.mean, s.max, s.stddev,
                        s.rel_stddev, m.work.bytes, m.work.items, csv_field(m.work.item_unit),
                        rate_field(m, "bytes_per_s"), rate_field(m, "items_per_s"), verified,
                        run_state);
    }
  }
}

void write_markdown(std::ostream& os, const run_report& rep) {
  if (rep.meta.incomplete)
    os << fmt::format("**Incomplete run:** {}\n\n", rep.meta.incomplete_reason);
  os << "| benchmark | device | parameters | measurement | median | min | rel. sd | samples | "
        "stop | bandwidth | rate | of peak | verified |\n";
  os << "|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---|---|\n";
  bool flagged = false;
  bool host_bound = false;
  bool limited = false;
  for (const auto& r : rep.results) {
    const std::string verified = !r.verify.performed ? "n/a" : r.verify.passed ? "yes" : "**NO**";
    const std::string dev = device_label(rep, r.device) + rank_suffix(r);
    if (r.measurements.empty())
      os << fmt::format("| {} | {} | {} | {}: {} | | | | | | | | | {} |\n",
                        markdown_text(r.benchmark), markdown_text(dev),
                        markdown_text(params_line(r.params)), to_string(r.status),
                        markdown_text(r.reason), verified);
    for (const auto& m : r.measurements) {
      const double bps = rate(m, "bytes_per_s");
      const double ips = rate(m, "items_per_s");
      const std::string stop = stop_text(m);
      flagged = flagged || telemetry_flagged(m.telemetry);
      host_bound = host_bound || m.host_bound;
      const bool limit = limit_stop(stop);
      limited = limited || limit;
      os << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                        markdown_text(r.benchmark), markdown_text(dev),
                        markdown_text(params_line(r.params)), markdown_text(marked_name(m)),
                        format_seconds(m.stats.median), format_seconds(m.stats.min), rel_sd_text(m),
                        m.stats.count, limit ? stop + " (not converged)" : stop,
                        bps > 0 ? format_bytes_per_s(bps) : "",
                        ips > 0 ? format_rate(ips, m.work.item_unit) : "", peak_text(m), verified);
    }
  }
  // The marks a table copied into a page must keep (scripts/doc_tables.py renders the same).
  std::vector<std::string> marks;
  if (flagged)
    marks.emplace_back(
        "`*` telemetry flagged (thermal, hw slowdown or another process on the GPU)");
  if (host_bound) marks.emplace_back("`^` host-bound (the host's launches paced the GPU)");
  if (limited)
    marks.emplace_back("stop `max-n`, `timeout`, `intr`: a limit, not the stopping rule, ended "
                       "sampling");
  if (!marks.empty()) os << fmt::format("\nMarks: {}.\n", fmt::join(marks, "; "));
}

namespace {

/// to_json(r).dump(2), without the whole document's tree: one result's at a time. The tree of a
/// 2,000-point run costs about ten times its text (27 MB for a 2.9 MB file), which made writing
/// the file the peak of a long sweep's memory (tests/cli/test_soak.py).
void write_json(std::ostream& os, const run_report& r) {
  run_report shell;
  shell.meta = r.meta;
  shell.devices = r.devices;
  shell.ranks = r.ranks;
  shell.aggregate = r.aggregate;
  const std::string head = to_json(shell).dump(2);
  const std::string slot = "\n  \"results\": []";
  const auto at = head.find(slot);
  if (r.results.empty() || at == std::string::npos) {
    os << to_json(r).dump(2) << '\n';
    return;
  }
  os << std::string_view(head).substr(0, at) << "\n  \"results\": [";
  run_report one;
  one.results.resize(1);
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    one.results.front() = r.results[i];
    std::string text = to_json(one).at("results").at(0).dump(2);
    // Indented as the array's elements are in the whole document (no raw newline is in a string).
    std::string indented;
    indented.reserve(text.size() + text.size() / 8);
    for (const char c : text) {
      indented += c;
      if (c == '\n') indented += "    ";
    }
    os << (i == 0 ? "\n    " : ",\n    ") << indented;
  }
  os << "\n  ]" << std::string_view(head).substr(at + slot.size()) << '\n';
}

} // namespace

void write_report(std::ostream& os, const run_report& r, output_format f,
                  const summary_writers& summaries) {
  switch (f) {
  case output_format::table: write_table(os, r, summaries); break;
  case output_format::json: write_json(os, r); break;
  case output_format::csv: write_csv(os, r); break;
  case output_format::md: write_markdown(os, r); break;
  }
  write_multi_gpu_summary(os, r, f); // multi-GPU: ranks and aggregates
}

} // namespace gpubench
