// The formats of a check run (check_report.hpp): the terminal table, JUnit XML and Prometheus
// text. Text from a saved file is escaped for the format it lands in.
#include "gpubench/check/check_report.hpp"

#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

namespace gpubench {

namespace {

std::string figure_cell(const std::optional<double>& v, const std::string& unit) {
  return v ? check_figure_text(*v, unit) : "-";
}

std::string upper(check_verdict v) {
  switch (v) {
  case check_verdict::pass: return "PASS";
  case check_verdict::warn: return "WARN";
  case check_verdict::fail: return "FAIL";
  case check_verdict::not_run: return "not run";
  }
  return "not run";
}

/// "node:device", "node:device/r2" where ranks shared the GPU.
std::string gpu_label(const gpu_checks& g) {
  return fmt::format("{}:{}{}", clip(g.host, 16), g.device,
                     g.shared ? fmt::format("/r{}", g.rank) : std::string());
}

std::string xml_escaped(std::string_view text) {
  std::string out;
  for (const char c : escaped(text)) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

/// A Prometheus label value: backslash, double quote and line feed escaped.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : escaped(text)) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

double verdict_number(check_verdict v) {
  switch (v) {
  case check_verdict::pass: return 0;
  case check_verdict::warn: return 1;
  case check_verdict::fail: return 2;
  case check_verdict::not_run: return -1;
  }
  return -1;
}

} // namespace

void write_check_table(std::ostream& os, const check_summary& s, std::size_t width) {
  // One line per GPU and check; the table folds to `width` (text_table.hpp). The start of a
  // reason says what was found: a long one is cut at its end here and written whole below the
  // table when the check did not pass.
  text_table t;
  t.header = {"GPU", "check", "figure", "reference", "ratio", "verdict", "reason"};
  t.right = {false, false, true, true, true, false, false};
  t.width = width;
  std::vector<std::string> notes;
  for (const auto& g : s.gpus) {
    for (const auto& o : g.checks) {
      t.rows.push_back({gpu_label(g), clip(o.id, 15), figure_cell(o.figure, o.unit),
                        figure_cell(o.reference, o.unit),
                        o.ratio ? fmt::format("{:.3f}", *o.ratio) : "-", upper(o.verdict),
                        clip(o.reason, 1000)});
      if (o.verdict != check_verdict::pass)
        notes.push_back(fmt::format("{} {} {}: {}", gpu_label(g), clip(o.id, 15), upper(o.verdict),
                                    clip(o.reason, 1000)));
    }
  }
  // The reason gets what the other columns leave of the width (at least 24 characters; the
  // table folds below that).
  std::size_t used = 2 * (t.header.size() - 1);
  for (std::size_t c = 0; c + 1 < t.header.size(); ++c) {
    std::size_t widest = t.header[c].size();
    for (const auto& row : t.rows) widest = std::max(widest, row[c].size());
    used += widest;
  }
  const std::size_t room = std::max<std::size_t>(width > used ? width - used : 0, 24);
  for (auto& row : t.rows)
    if (row.back().size() > room) row.back() = row.back().substr(0, room - 3) + "...";
  write_text_table(os, t);
  if (!notes.empty()) {
    os << "\nWhat did not pass:\n";
    for (const auto& n : notes) write_wrapped(os, n, width, "  ", "    ");
  }
  os << '\n';
  for (const auto& g : s.gpus) {
    int fails = 0;
    int warns = 0;
    int not_run = 0;
    for (const auto& o : g.checks) {
      fails += o.verdict == check_verdict::fail ? 1 : 0;
      warns += o.verdict == check_verdict::warn ? 1 : 0;
      not_run += o.verdict == check_verdict::not_run ? 1 : 0;
    }
    const std::string where = g.uuid.empty()
                                  ? clip(g.pci_bus_id, 20)
                                  : fmt::format("{}, {}", clip(g.pci_bus_id, 20), clip(g.uuid, 48));
    write_wrapped(os,
                  fmt::format("{} {} ({}): {} ({} checks, {} failed, {} warned, {} not run){}{}",
                              gpu_label(g), clip(g.model, 40), where, upper(g.verdict),
                              g.checks.size(), fails, warns, not_run,
                              g.state_checked ? "" : "; the GPU's state was not checked (no NVML)",
                              g.outlier ? "; an outlier among its peers" : ""),
                  width, "", "  ");
  }
  write_wrapped(
      os,
      fmt::format("Fleet: {} GPUs checked, {} passed, {} warned, {} failed, {} outliers{}",
                  s.gpus.size(), s.passed, s.warned, s.failed, s.outliers,
                  s.slowest.empty() ? "" : fmt::format("; slowest: {}", clip(s.slowest, 60))),
      width, "", "  ");
}

void write_check_junit(std::ostream& os, const check_summary& s, bool strict) {
  int tests = 0;
  int failures = 0;
  int skipped = 0;
  for (const auto& g : s.gpus)
    for (const auto& o : g.checks) {
      ++tests;
      failures +=
          o.verdict == check_verdict::fail || (strict && o.verdict == check_verdict::warn) ? 1 : 0;
      skipped += o.verdict == check_verdict::not_run ? 1 : 0;
    }
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << fmt::format("<testsuites name=\"gpubench check\" tests=\"{}\" failures=\"{}\" "
                    "skipped=\"{}\" errors=\"0\">\n",
                    tests, failures, skipped);
  for (const auto& g : s.gpus) {
    int f = 0;
    int k = 0;
    for (const auto& o : g.checks) {
      f += o.verdict == check_verdict::fail || (strict && o.verdict == check_verdict::warn) ? 1 : 0;
      k += o.verdict == check_verdict::not_run ? 1 : 0;
    }
    const std::string rank = g.shared ? fmt::format(" rank {}", g.rank) : std::string();
    const std::string suite =
        xml_escaped(fmt::format("{} GPU {}{} {} {}", g.host, g.device, rank, g.model, g.uuid));
    os << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" "
                      "errors=\"0\">\n",
                      suite, g.checks.size(), f, k);
    for (const auto& o : g.checks) {
      os << fmt::format(
          "    <testcase classname=\"{}\" name=\"{}\">\n",
          xml_escaped(fmt::format("gpubench.check.{}.gpu{}{}", g.host, g.device,
                                  g.shared ? fmt::format(".rank{}", g.rank) : std::string())),
          xml_escaped(o.id));
      const std::string reason = xml_escaped(o.reason);
      if (o.verdict == check_verdict::fail || (strict && o.verdict == check_verdict::warn))
        os << fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", reason,
                          to_string(o.verdict), reason);
      else if (o.verdict == check_verdict::not_run)
        os << fmt::format("      <skipped message=\"{}\"/>\n", reason);
      os << fmt::format("      <system-out>{}: {}</system-out>\n", upper(o.verdict), reason);
      os << "    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
}

void write_check_prometheus(std::ostream& os, const check_summary& s) {
  const auto labels = [](const gpu_checks& g) {
    // Ranks that shared a GPU are told apart by a rank label (one series each).
    return fmt::format("gpu_uuid=\"{}\",model=\"{}\",node=\"{}\",pci_bus_id=\"{}\"{}",
                       label_value(g.uuid), label_value(g.model), label_value(g.host),
                       label_value(g.pci_bus_id),
                       g.shared ? fmt::format(",rank=\"{}\"", g.rank) : std::string());
  };
  os << "# HELP gpubench_check_value The figure a check measured, in its unit.\n"
        "# TYPE gpubench_check_value gauge\n";
  for (const auto& g : s.gpus)
    for (const auto& o : g.checks)
      if (o.figure)
        os << fmt::format("gpubench_check_value{{{},check=\"{}\",unit=\"{}\"}} {}\n", labels(g),
                          label_value(o.id), label_value(o.unit), *o.figure);
  os << "# HELP gpubench_check_ratio The figure over its reference.\n"
        "# TYPE gpubench_check_ratio gauge\n";
  for (const auto& g : s.gpus)
    for (const auto& o : g.checks)
      if (o.ratio)
        os << fmt::format("gpubench_check_ratio{{{},check=\"{}\",reference=\"{}\"}} {}\n",
                          labels(g), label_value(o.id), label_value(o.reference_kind), *o.ratio);
  os << "# HELP gpubench_check_verdict A check's verdict: 0 pass, 1 warn, 2 fail, -1 not run.\n"
        "# TYPE gpubench_check_verdict gauge\n";
  for (const auto& g : s.gpus)
    for (const auto& o : g.checks)
      os << fmt::format("gpubench_check_verdict{{{},check=\"{}\"}} {}\n", labels(g),
                        label_value(o.id), verdict_number(o.verdict));
  os << "# HELP gpubench_check_gpu_verdict A GPU's verdict, the worst of its checks: 0 pass, 1 "
        "warn, 2 fail, -1 nothing run.\n"
        "# TYPE gpubench_check_gpu_verdict gauge\n";
  for (const auto& g : s.gpus)
    os << fmt::format("gpubench_check_gpu_verdict{{{}}} {}\n", labels(g),
                      verdict_number(g.verdict));
  os << "# HELP gpubench_check_gpu_outlier 1 when the fleet rule named the GPU an outlier.\n"
        "# TYPE gpubench_check_gpu_outlier gauge\n";
  for (const auto& g : s.gpus)
    os << fmt::format("gpubench_check_gpu_outlier{{{}}} {}\n", labels(g), g.outlier ? 1 : 0);
}

std::optional<check_format> parse_check_format(std::string_view s) noexcept {
  if (s == "table") return check_format::table;
  if (s == "json") return check_format::json;
  if (s == "junit") return check_format::junit;
  if (s == "prometheus") return check_format::prometheus;
  return std::nullopt;
}

std::optional<check_format> check_format_of_path(std::string_view path) noexcept {
  if (path.ends_with(".json")) return check_format::json;
  if (path.ends_with(".xml")) return check_format::junit;
  if (path.ends_with(".prom")) return check_format::prometheus;
  if (path.ends_with(".txt")) return check_format::table;
  return std::nullopt;
}

std::string render_check(const run_report& r, check_format f, bool strict, std::size_t width) {
  std::ostringstream os;
  switch (f) {
  case check_format::json: os << to_json(r).dump(2) << '\n'; break;
  case check_format::table: write_check_table(os, summarize_checks(r), width); break;
  case check_format::junit: write_check_junit(os, summarize_checks(r), strict); break;
  case check_format::prometheus: write_check_prometheus(os, summarize_checks(r)); break;
  }
  return std::move(os).str();
}

} // namespace gpubench
