// compare's output: the environments side by side, one row per measurement (table, md, csv,
// json) and JUnit XML. Only renders what compare_runs decided (compare.cpp).
#include "gpubench/gate/compare.hpp"

#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <ostream>
#include <utility>

namespace gpubench {
namespace {

using nlohmann::json;

std::string percent(double fraction) {
  if (std::isinf(fraction)) return fraction > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", 100.0 * fraction);
}

std::string interval_text(const measurement_verdict& v) {
  if (!v.bounded) return "(none)";
  return fmt::format("[{}, {}]", percent(v.lo), percent(v.hi));
}

std::string verdict_text(const comparison_row& r) {
  std::string v(to_string(r.result.outcome));
  if (r.regression()) return "REGRESSION"; // slower beyond the threshold
  if (!r.gated) return v + " (not gated)"; // a host-clock or host-bound row, not asked for
  return v;
}

/// The measurement with its class when that is not the GPU's: the reason a row may be not gated.
std::string measurement_text(const comparison_row& r) {
  if (r.kind == gate_class::gpu) return r.measurement;
  return fmt::format("{} [{}]", r.measurement, to_string(r.kind));
}

/// How the rows were gated: one line for the gated classes, one per class not gated with why and
/// how to gate it; each short enough for a 120-column terminal (and wrapped where the output is
/// narrower).
std::vector<std::string> gate_lines(const comparison& c) {
  struct class_text {
    gate_class kind;
    const char* rows;
    const char* why;
    double asked;
  };
  const std::array<class_text, 3> classes{{
      {gate_class::gpu, "GPU-clock", "", 0},
      {gate_class::host, "host-clock", "host timings move between processes",
       default_host_threshold},
      {gate_class::host_bound, "host-bound", "their GPU waited on the host",
       default_host_bound_threshold},
  }};
  std::vector<std::string> gated;
  std::vector<std::string> lines;
  for (const auto& k : classes) {
    const auto n = c.rows_of(k.kind);
    const auto own = c.threshold_of(k.kind);
    if (own && n > 0) {
      gated.push_back(
          fmt::format("{} {} row{} at {:.1f}%", n, k.rows, n == 1 ? "" : "s", 100 * *own));
    } else if (!own && n > 0) {
      lines.push_back(fmt::format("Not gated: {} {} row{} ({}; --gate {} gates them at {:.1f}%)", n,
                                  k.rows, n == 1 ? "" : "s", k.why, to_string(k.kind),
                                  100 * k.asked));
    }
  }
  const std::string head =
      c.rows.empty() ? std::string("Gated: nothing compared")
      : c.gated_rows() == 0
          ? std::string("Gated: no row, so nothing compared here can fail the gate")
          : fmt::format("Gated: {}", fmt::join(gated, ", "));
  lines.insert(lines.begin(), head);
  return lines;
}

/// The counts, the rules they were judged by, and which rows were gated (and why the others were
/// not): each line short enough for a 120-column terminal (and wrapped where the output is
/// narrower).
std::vector<std::string> summary_lines(const comparison& c) {
  std::map<verdict, int> counts;
  for (const auto& row : c.rows) ++counts[row.result.outcome];
  // With one run on a side the limits move by the assumed run noise (docs/compare.md).
  const bool one_run = c.base_env.runs < 2 || c.new_env.runs < 2;
  const double margin = one_run ? c.same_margin - c.run_noise : c.same_margin;
  const std::string same = margin > 0 ? fmt::format("same within +-{:.1f}%", 100.0 * margin)
                                      : std::string("never same with one run a side");
  // Each class's threshold is on the "Gated:" line below; host-clock rows gated with --gate host
  // are judged at theirs, not at the GPU rows'.
  bool own_thresholds = false;
  for (const auto kind : {gate_class::host, gate_class::host_bound}) {
    const auto t = c.threshold_of(kind);
    own_thresholds = own_thresholds || (c.rows_of(kind) > 0 && t && *t != c.threshold);
  }
  const std::string base_limit = own_thresholds
                                     ? std::string("thresholds as gated")
                                     : fmt::format("threshold {:.1f}%", 100.0 * c.threshold);
  const std::string limit =
      one_run ? fmt::format("{} + run noise {:.1f}%", base_limit, 100.0 * c.run_noise) : base_limit;
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("{} of {} BASE measurements compared ({:.0f}%): {} faster, {} slower, "
                  "{} same, {} inconclusive; {} regressions",
                  c.rows.size(), c.base_measurements, 100 * c.compared_share(),
                  counts[verdict::faster], counts[verdict::slower], counts[verdict::same],
                  counts[verdict::inconclusive], c.regressions()));
  lines.push_back(fmt::format("Judged {} run{} vs {}: {}, {}, {:.0f}% intervals", c.base_env.runs,
                              c.base_env.runs == 1 ? "" : "s", c.new_env.runs, limit, same,
                              100 * (1 - c.alpha)));
  for (auto& line : gate_lines(c)) lines.push_back(std::move(line));
  if (margin <= 0)
    lines.push_back(fmt::format("Never same: one run a side adds {:.1f}% run noise, more than the "
                                "{:.1f}% margin of same; two runs a side or more can be",
                                100.0 * c.run_noise, 100.0 * c.same_margin));
  lines.push_back(code_line(c.base_env, c.new_env));
  return lines;
}

std::string coverage_line(const comparison& c) {
  return fmt::format("NOT ENOUGH COMPARED: {} of {} BASE measurements ({:.0f}%, at least {:.0f}% "
                     "required); see \"Only in BASE\" and \"Notes\" for what did not match "
                     "(exit 2)",
                     c.rows.size(), c.base_measurements, 100 * c.compared_share(),
                     100 * c.min_compared);
}

std::vector<std::string> header() {
  return {"benchmark", "params", "device",   "measurement", "base",
          "new",       "change", "interval", "runs",        "verdict"};
}

bool numeric_column(std::size_t i) { return i >= 4 && i <= 8; }

std::vector<std::string> cells(const comparison_row& r) {
  return {r.benchmark,
          params_text(r.params),
          r.device,
          measurement_text(r),
          format_seconds(r.result.base_median),
          format_seconds(r.result.new_median),
          percent(r.result.change),
          interval_text(r.result),
          fmt::format("{}/{}", r.result.base_runs, r.result.new_runs),
          verdict_text(r)};
}

std::string optional_number(const std::optional<double>& v, const char* unit) {
  return v ? fmt::format("{:.0f} {}", *v, unit) : std::string("-");
}

std::vector<std::vector<std::string>> environment_rows(const comparison& c) {
  const auto row = [](std::string name, const side_environment& b, const side_environment& n,
                      auto get) {
    return std::vector<std::string>{name, get(b), get(n)};
  };
  const auto& b = c.base_env;
  const auto& n = c.new_env;
  std::vector<std::vector<std::string>> rows{{"", "BASE", "NEW"}};
  // File names without their folders, and the first and last of more than two (the JSON output
  // lists every path): the block stays narrow however deep the paths are.
  rows.push_back(row("files", b, n, [](const side_environment& e) {
    std::vector<std::string> names;
    for (const auto& f : e.files) names.push_back(std::filesystem::path(f).filename().string());
    const std::string shown = names.size() > 2
                                  ? fmt::format("{} ... {}", names.front(), names.back())
                                  : fmt::format("{}", fmt::join(names, " "));
    return fmt::format("{} ({} run{})", shown, e.runs, e.runs == 1 ? "" : "s");
  }));
  rows.push_back(row("gpu", b, n, [](const side_environment& e) {
    return e.gpus.empty() ? std::string("cpu") : fmt::format("{}", fmt::join(e.gpus, ", "));
  }));
  rows.push_back(row("driver / CUDA / runtime", b, n, [](const side_environment& e) {
    return fmt::format("{} / {} / {}", e.nvidia_driver.empty() ? "-" : e.nvidia_driver,
                       e.driver.empty() ? "-" : e.driver, e.runtime.empty() ? "-" : e.runtime);
  }));
  rows.push_back(row("git", b, n, [](const side_environment& e) { return e.git; }));
  rows.push_back(row("sources (sha256)", b, n, [](const side_environment& e) {
    std::vector<std::string> shown;
    for (const auto& h : e.source_hashes) shown.push_back(h.empty() ? "-" : h.substr(0, 12));
    return fmt::format("{}", fmt::join(shown, ", "));
  }));
  rows.push_back(row("host", b, n, [](const side_environment& e) { return e.host; }));
  rows.push_back(row("started", b, n, [](const side_environment& e) { return e.started_at; }));
  rows.push_back(row("sm / mem clock", b, n, [](const side_environment& e) {
    return optional_number(e.sm_clock_mhz, "MHz") + " / " + optional_number(e.mem_clock_mhz, "MHz");
  }));
  rows.push_back(row("telemetry flags", b, n, [](const side_environment& e) {
    return e.flags.empty() ? std::string("-") : fmt::format("{}", fmt::join(e.flags, ", "));
  }));
  if (!b.test_slowdown.empty() || !n.test_slowdown.empty())
    rows.push_back(row("TEST SLOWDOWN", b, n, [](const side_environment& e) {
      return e.test_slowdown.empty() ? std::string("-") : e.test_slowdown;
    }));
  return rows;
}

/// The outcome in one line, written first: what the exit code will say, and the counts behind it.
std::string verdict_line(const comparison& c) {
  std::map<verdict, int> counts;
  for (const auto& row : c.rows) ++counts[row.result.outcome];
  const auto tally = fmt::format(
      "{} slower, {} faster, {} same, {} inconclusive of {} compared", counts[verdict::slower],
      counts[verdict::faster], counts[verdict::same], counts[verdict::inconclusive], c.rows.size());
  if (c.regressions() > 0)
    return fmt::format("Verdict: REGRESSION in {} gated row{} (exit 1); {}", c.regressions(),
                       c.regressions() == 1 ? "" : "s", tally);
  if (c.coverage_short())
    return fmt::format("Verdict: NOT ENOUGH COMPARED, {:.0f}% of BASE where {:.0f}% is required "
                       "(exit 2); {}",
                       100 * c.compared_share(), 100 * c.min_compared, tally);
  return fmt::format("Verdict: no regression; {}", tally);
}

/// Lists under the table: a title, then one item a bullet, wrapped to the output's width (the
/// continuation lines indented under the item).
void write_lists(std::ostream& os, const comparison& c, std::string_view bullet) {
  const std::string continuation = std::string(bullet) + "  ";
  auto list = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    os << '\n' << title << ":\n";
    for (const auto& i : items) write_wrapped(os, i, output_width(), bullet, continuation);
  };
  list("Warnings", c.warnings);
  list("Only in BASE", c.only_in_base);
  list("Only in NEW", c.only_in_new);
  list("Notes", c.notes);
  std::vector<std::string> regressions;
  for (const auto& r : c.rows) {
    if (r.regression()) {
      regressions.push_back(fmt::format("{} {} [{}]: {} {} beyond {:.1f}% ({} -> {})", r.benchmark,
                                        r.measurement, params_text(r.params),
                                        percent(r.result.change), interval_text(r.result),
                                        100 * r.result.limit, format_seconds(r.result.base_median),
                                        format_seconds(r.result.new_median)));
    }
  }
  list("Regressions", regressions);
  os << '\n';
  for (const auto& line : summary_lines(c)) write_wrapped(os, line, output_width(), "", "  ");
  if (c.coverage_short()) write_wrapped(os, coverage_line(c), output_width(), "", "  ");
}

/// The rows as columns for the shared writers (text_table.hpp); the parameters wrap in a table.
/// The device column is left out when every row is on one device: the environment block above
/// names it, and the table then fits 120 columns.
text_table rows_table(const comparison& c, bool mark_regressions) {
  text_table t;
  t.header = header();
  for (std::size_t i = 0; i < t.header.size(); ++i) t.right.push_back(numeric_column(i));
  t.wrap_column = 1;
  for (const auto& r : c.rows) {
    auto row = cells(r);
    if (mark_regressions && r.regression()) row.back() = "**" + row.back() + "**";
    t.rows.push_back(std::move(row));
  }
  if (constexpr std::size_t device_column = 2; constant_column(t, device_column))
    erase_column(t, device_column);
  return t;
}

/// The environments side by side: a table with no number columns.
text_table environment_table(const comparison& c) {
  auto rows = environment_rows(c);
  text_table t;
  t.header = rows.front();
  t.rows.assign(rows.begin() + 1, rows.end());
  t.right.assign(t.header.size(), false);
  return t;
}

void write_table(std::ostream& os, const comparison& c) {
  // The verdict first, then what was compared (the environments), then the rows.
  write_wrapped(os, verdict_line(c), output_width(), "", "  ");
  os << '\n';
  write_text_table(os, environment_table(c));
  os << '\n';
  auto rows = rows_table(c, false);
  // Rows grouped by point: the benchmark and its parameters once, as a heading, then that
  // point's measurements one per line (a sweep's parameters would otherwise wrap down a column).
  // The device too, where the rows are on several (a merged MPI or --concurrent run).
  constexpr std::size_t benchmark_column = 0;
  constexpr std::size_t params_column = 1;
  constexpr std::size_t device_column = 2;
  const bool device_shown = rows.header[device_column] == "device";
  for (const auto& row : rows.rows)
    rows.sections.push_back(row[benchmark_column] + " | " + row[params_column] +
                            (device_shown ? " | " + row[device_column] : std::string()));
  if (device_shown) erase_column(rows, device_column);
  erase_column(rows, params_column);
  erase_column(rows, benchmark_column);
  rows.wrap_column = -1;
  write_text_table(os, rows);
  write_lists(os, c, "  ");
}

void write_markdown(std::ostream& os, const comparison& c) {
  const auto regressions = c.regressions();
  os << "### gpubench compare: "
     << (regressions > 0 ? fmt::format("{} regression{}", regressions, regressions == 1 ? "" : "s")
         : c.coverage_short() ? std::string("not enough compared")
                              : std::string("no regression"))
     << "\n\n";
  write_markdown_table(os, environment_table(c));
  os << '\n';
  write_markdown_table(os, rows_table(c, true));
  write_lists(os, c, "- ");
}

void write_csv(std::ostream& os, const comparison& c) {
  text_table t;
  t.header = {"benchmark",   "params",        "device",       "measurement", "base_samples",
              "new_samples", "base_median_s", "new_median_s", "change",      "p_value",
              "verdict",     "regression",    "interval_lo",  "interval_hi", "base_runs",
              "new_runs",    "host_bound",    "gated",        "clock",       "gate_class",
              "gate_reason"};
  t.right = {false, false, false, false, true, true,  true,  true,  true,  true, false,
             false, true,  true,  true,  true, false, false, false, false, false};
  const auto number = [](double x) { return std::isfinite(x) ? fmt::format("{}", x) : ""; };
  const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  for (const auto& r : c.rows)
    t.rows.push_back({r.benchmark,
                      params_text(r.params),
                      r.device,
                      r.measurement,
                      fmt::format("{}", r.base_samples),
                      fmt::format("{}", r.new_samples),
                      number(r.result.base_median),
                      number(r.result.new_median),
                      number(r.result.change),
                      number(r.result.p_value),
                      std::string(to_string(r.result.outcome)),
                      flag(r.regression()),
                      number(r.result.lo),
                      number(r.result.hi),
                      fmt::format("{}", r.result.base_runs),
                      fmt::format("{}", r.result.new_runs),
                      flag(r.host_bound),
                      flag(r.gated),
                      std::string(to_string(r.clock)),
                      std::string(to_string(r.kind)),
                      gate_reason(r)});
  write_csv_table(os, t);
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += ch;
    }
  }
  return out;
}

} // namespace

void write_comparison(std::ostream& os, const comparison& c, output_format format) {
  switch (format) {
  case output_format::json: os << to_json(c).dump(2) << '\n'; return;
  case output_format::md: write_markdown(os, c); return;
  case output_format::csv: write_csv(os, c); return;
  case output_format::table: write_table(os, c); return;
  }
}

void write_junit(std::ostream& os, const comparison& c) {
  std::size_t skipped = 0;
  for (const auto& r : c.rows)
    if (r.result.outcome == verdict::inconclusive) ++skipped;
  const std::size_t failures = c.regressions() + (c.coverage_short() ? 1 : 0);
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << fmt::format("<testsuites tests=\"{0}\" failures=\"{1}\">\n"
                    "  <testsuite name=\"gpubench compare\" tests=\"{0}\" failures=\"{1}\" "
                    "skipped=\"{2}\" errors=\"0\">\n",
                    c.rows.size() + 1, failures, skipped);
  os << "    <testcase classname=\"gpubench.compare\" name=\"coverage of BASE\">\n";
  if (c.coverage_short())
    os << "      <failure message=\"" << xml_escape(coverage_line(c)) << "\"/>\n";
  os << "    </testcase>\n";
  for (const auto& r : c.rows) {
    const auto name =
        fmt::format("{} [{}] on {}", measurement_text(r), params_text(r.params), r.device);
    const auto detail =
        fmt::format("{}: change {} interval {} ({} -> {}, {} runs vs {}, limit {:.1f}%; {})",
                    verdict_text(r), percent(r.result.change), interval_text(r.result),
                    format_seconds(r.result.base_median), format_seconds(r.result.new_median),
                    r.result.base_runs, r.result.new_runs, 100 * r.result.limit, gate_reason(r));
    os << "    <testcase classname=\"gpubench." << xml_escape(r.benchmark) << "\" name=\""
       << xml_escape(name) << "\">\n";
    if (r.regression())
      os << "      <failure message=\"" << xml_escape(detail) << "\"/>\n";
    else if (r.result.outcome == verdict::inconclusive)
      os << "      <skipped message=\""
         << xml_escape(detail + (r.result.note.empty() ? "" : "; " + r.result.note)) << "\"/>\n";
    else
      os << "      <system-out>" << xml_escape(detail) << "</system-out>\n";
    os << "    </testcase>\n";
  }
  os << "  </testsuite>\n</testsuites>\n";
}

} // namespace gpubench
