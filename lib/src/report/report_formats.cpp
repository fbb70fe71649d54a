// The report's machine formats: CSV, Markdown and JSON (streamed a result at a time), and the
// one entry point that picks the writer.
#include "gpubench/report/report.hpp"
#include "report_cells.hpp"

#include "gpubench/report/multi_gpu_report.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>
#include <set>
#include <string_view>

namespace gpubench {

using nlohmann::json;
using namespace report_detail;

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
                        csv_field(m.name), to_string(m.clock), m.cold, m.converged, s.count, s.min,
                        s.median, s.mean, s.max, s.stddev, s.rel_stddev, m.work.bytes, m.work.items,
                        csv_field(m.work.item_unit), rate_field(m, "bytes_per_s"),
                        rate_field(m, "items_per_s"), verified, run_state);
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
