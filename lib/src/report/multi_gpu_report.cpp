#include "gpubench/report/multi_gpu_report.hpp"

#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <ostream>
#include <sstream>
#include <vector>

namespace gpubench {

using nlohmann::json;

std::string rank_suffix(const result& r) {
  if (r.rank < 0) return {};
  return r.host.empty() ? fmt::format(" rank {}", r.rank)
                        : fmt::format(" rank {} ({})", r.rank, r.host);
}

namespace {

double number_at(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return -1;
    at = &(*at)[key];
  }
  return at->is_number() ? at->get<double>() : -1;
}

struct aggregate_row {
  std::string point;
  std::string measurement;
  std::string ranks;
  std::string sum_bandwidth;
  std::string sum_rate;
  std::string medians;
  std::string straggler;
  std::string skew;
};

std::vector<aggregate_row> aggregate_rows(const json& aggregate) {
  std::vector<aggregate_row> rows;
  for (const auto& p : aggregate.value("points", json::array())) {
    const double point_skew = number_at(p, {"start_skew_s"});
    for (const auto& m : p.value("measurements", json::array())) {
      aggregate_row row;
      row.point = fmt::format("{} {}", p.value("benchmark", ""),
                              params_text(p.value("params", json::object())));
      row.measurement = m.value("name", "");
      row.ranks = std::to_string(m.value("ranks", 0));
      const double bps = number_at(m, {"rates", "bytes_per_s", "sum"});
      const double ips = number_at(m, {"rates", "items_per_s", "sum"});
      row.sum_bandwidth = bps > 0 ? format_bytes_per_s(bps) : "";
      row.sum_rate = ips > 0 ? format_rate(ips, "items") : "";
      row.medians = fmt::format("{} / {} / {}", format_seconds(number_at(m, {"median_s", "min"})),
                                format_seconds(number_at(m, {"median_s", "median"})),
                                format_seconds(number_at(m, {"median_s", "max"})));
      row.straggler = fmt::format("{:.3f}", number_at(m, {"straggler_ratio"}));
      const double skew = m.contains("start_skew_s") ? number_at(m, {"start_skew_s"}) : point_skew;
      row.skew = skew >= 0 ? format_seconds(skew) : "";
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string rank_line(const json& r) {
  std::string gpu = r.value("local_device", -1) < 0
                        ? std::string("CPU only")
                        : fmt::format("GPU {} {} {}", r.value("local_device", -1),
                                      r.value("gpu_name", ""), r.value("pci_bus_id", ""));
  std::string flags;
  if (r.value("shares_gpu", false))
    flags = fmt::format(" [shares its GPU with rank {}]",
                        r.value("shares_gpu_with", json::array()).dump());
  const std::string status = r.value("status", "ok");
  if (status != "ok") flags += fmt::format(" [{}: {}]", status, r.value("reason", ""));
  return fmt::format("rank {} on {}: {}{}", r.value("rank", 0), r.value("host", ""), gpu, flags);
}

} // namespace

void write_multi_gpu_summary(std::ostream& os, const run_report& rep, output_format f) {
  if (!rep.aggregate.is_object() || (f != output_format::table && f != output_format::md)) return;
  const auto& a = rep.aggregate;
  const auto shared = a.value("ranks_sharing_a_gpu", 0);
  const std::string head = fmt::format(
      "Multi-GPU ({}): {} ranks on {} node{}{}", a.value("mode", ""), a.value("ranks", 0),
      a.value("nodes", 0), a.value("nodes", 0) == 1 ? "" : "s",
      shared > 0 ? fmt::format("; {} ranks share a GPU (their figures are not independent)", shared)
                 : "");
  const auto rows = aggregate_rows(a);
  if (f == output_format::md) {
    os << "\n**" << head << "**\n\n";
    for (const auto& r : rep.ranks) os << "- " << rank_line(r) << "\n";
    os << "\n| point | measurement | ranks | sum bandwidth | sum rate | median min / median / max "
          "| straggler | start skew |\n|---|---|---:|---:|---:|---|---:|---:|\n";
    for (const auto& r : rows)
      os << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", r.point, r.measurement,
                        r.ranks, r.sum_bandwidth, r.sum_rate, r.medians, r.straggler, r.skew);
    return;
  }
  os << '\n';
  write_wrapped(os, head, output_width(), "", "  ");
  for (const auto& r : rep.ranks) write_wrapped(os, rank_line(r), output_width(), "  ", "    ");
  // A point's parameters once, as a heading (wrapped), then its measurements one per row; the
  // shared writer fits the table to the output's width (folding it where it is narrow).
  text_table t;
  t.header = {"measurement", "ranks",     "sum bw", "sum rate", "median: min / median / max",
              "straggler",   "start skew"};
  t.right = {false, true, true, true, true, true, true};
  t.width = output_width() - 2; // every line below is indented two spaces
  for (const auto& r : rows) {
    t.rows.push_back(
        {r.measurement, r.ranks, r.sum_bandwidth, r.sum_rate, r.medians, r.straggler, r.skew});
    t.sections.push_back(r.point);
  }
  std::ostringstream table;
  write_text_table(table, t);
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);)
    os << (line.empty() ? "" : "  ") << line << '\n';
}

std::optional<std::string> job_shape_mismatch(const run_report& base, const run_report& next) {
  const auto shape = [](const run_report& r) {
    std::vector<std::string> gpus;
    if (r.ranks.is_array())
      for (const auto& k : r.ranks)
        gpus.push_back(k.value("local_device", -1) < 0 ? "CPU" : k.value("gpu_name", "?"));
    const int nodes = r.aggregate.is_object() ? r.aggregate.value("nodes", 1) : 1;
    return std::make_pair(gpus, nodes);
  };
  const auto [bg, bn] = shape(base);
  const auto [ng, nn] = shape(next);
  const auto describe = [](const std::vector<std::string>& gpus, int nodes) {
    if (gpus.empty()) return std::string("a single-GPU run");
    return fmt::format("{} ranks on {} node{} ({})", gpus.size(), nodes, nodes == 1 ? "" : "s",
                       fmt::join(gpus, ", "));
  };
  if (bg == ng && bn == nn) return std::nullopt;
  return fmt::format("BASE is {} but NEW is {}: jobs of different shapes are not comparable; "
                     "pass --force to compare them anyway",
                     describe(bg, bn), describe(ng, nn));
}

} // namespace gpubench
