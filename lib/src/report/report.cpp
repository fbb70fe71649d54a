#include "gpubench/report/report.hpp"
#include "report_cells.hpp"

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

using namespace report_detail;

/// The width the table's text lines keep to: the output's, less the indent of their
/// continuation lines.
std::size_t table_width() { return output_width() - 4; }

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
  t.header = {"measurement", "clock",     "median", "min",           "rel.sd", "n",
              "stop",        "bandwidth", "rate",   "of peak (D2D)", "of roof"};
  t.right = {false, false, true, true, true, true, true, true, true, false, true};
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
                      peak_text(m), roof_text(m)});
  }
  say_constant_columns_once(os, t);
  std::ostringstream rows;
  write_text_table(rows, t);
  std::istringstream lines(rows.str());
  for (std::string line; std::getline(lines, line);)
    os << (line.empty() ? "" : "  ") << line << '\n';
  write_what_the_gpu_did(os, r);
  for (const auto& [k, v] : r.derived.items()) {
    // A check's outcomes and the GPU's state are the verdict table's (docs/check.md).
    if (r.benchmark == "check" && (k == "check" || k == "state")) continue;
    write_note(os, fmt::format("{}: {}", k, derived_value(k, v)));
  }
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
  bool roof = false;
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
      t.roof = t.roof || !roof_text(m).empty();
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
  if (t.roof)
    items.emplace_back(
        "of roof = % of the roofline at the row's FLOPs per byte (docs/roofline.md)");
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
    "  theoretical peak bandwidth (of the measured device-to-device copy); of roof = % of the\n"
    "  theoretical compute roof at the row's FLOPs per byte (blank under the bandwidth roof,\n"
    "  where of peak says it); stop: noise = rel.sd\n"
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

} // namespace gpubench
