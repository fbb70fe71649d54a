// compare BASE NEW: results matched by benchmark, parameters and device; each measurement judged
// from its raw samples with a Mann-Whitney U test and the threshold on the ratio of medians.
#include "gpubench/compare.hpp"

#include "gpubench/errors.hpp"
#include "gpubench/run_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

namespace gpubench {
namespace {

using nlohmann::json;

double median_of(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string device_name(const run_report& r, int id) {
  if (id < 0) return "cpu";
  for (const auto& d : r.devices) {
    if (d.info.id == id) return d.info.name;
  }
  return fmt::format("device {}", id);
}

std::string describe_result(const result& res, const std::string& device) {
  return fmt::format("{} [{}] {}", res.benchmark, device, describe_params(res.params));
}

std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100.0 * fraction); }

std::string p_text(double p) { return p < 0.001 ? "<0.001" : fmt::format("{:.3f}", p); }

std::set<std::string> gpu_models(const run_report& r) {
  std::set<std::string> names;
  for (const auto& res : r.results) {
    if (res.device >= 0) names.insert(device_name(r, res.device));
  }
  return names;
}

bool has_samples(const result& r) {
  return r.status == result_status::ok || r.status == result_status::failed;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string summary_line(const comparison& c) {
  std::map<verdict, int> counts;
  for (const auto& row : c.rows) ++counts[row.result.outcome];
  return fmt::format("{} measurements compared: {} faster, {} slower, {} same, {} inconclusive "
                     "(threshold {:.1f}%, Mann-Whitney U at alpha {})",
                     c.rows.size(), counts[verdict::faster], counts[verdict::slower],
                     counts[verdict::same], counts[verdict::inconclusive], 100.0 * c.threshold,
                     c.alpha);
}

std::vector<std::string> header() {
  return {"benchmark", "params", "device", "measurement", "base", "new", "change", "p", "verdict"};
}

std::vector<std::string> cells(const comparison_row& r) {
  return {r.benchmark,
          describe_params(r.params),
          r.device,
          r.measurement,
          format_seconds(r.result.base_median),
          format_seconds(r.result.new_median),
          percent(r.result.change),
          p_text(r.result.p_value),
          std::string(to_string(r.result.outcome)) + (r.regression() ? " (REGRESSION)" : "")};
}

void write_lists(std::ostream& os, const comparison& c, std::string_view bullet) {
  auto list = [&](std::string_view title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    os << '\n' << title << ":\n";
    for (const auto& i : items) os << bullet << i << '\n';
  };
  list("Only in BASE", c.only_in_base);
  list("Only in NEW", c.only_in_new);
  list("Notes", c.notes);
  std::vector<std::string> regressions;
  for (const auto& r : c.rows) {
    if (r.regression()) {
      regressions.push_back(fmt::format(
          "{} {} [{}]: {} ({} -> {}, p {})", r.benchmark, r.measurement, describe_params(r.params),
          percent(r.result.change), format_seconds(r.result.base_median),
          format_seconds(r.result.new_median), p_text(r.result.p_value)));
    }
  }
  list("Regressions", regressions);
  os << '\n' << summary_line(c) << '\n';
}

void write_table(std::ostream& os, const comparison& c) {
  std::vector<std::vector<std::string>> table{header()};
  for (const auto& r : c.rows) table.push_back(cells(r));
  std::vector<std::size_t> width(table.front().size(), 0);
  for (const auto& row : table) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : table) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool numeric = i >= 4 && i <= 7;
      line += numeric ? fmt::format("{:>{}}", row[i], width[i])
                      : fmt::format("{:<{}}", row[i], width[i]);
      if (i + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << '\n';
  }
  write_lists(os, c, "  ");
}

void write_markdown(std::ostream& os, const comparison& c) {
  const auto h = header();
  os << "| " << fmt::format("{}", fmt::join(h, " | ")) << " |\n|";
  for (std::size_t i = 0; i < h.size(); ++i) os << (i >= 4 && i <= 7 ? "---:|" : "---|");
  os << '\n';
  for (const auto& r : c.rows) {
    auto row = cells(r);
    if (r.regression()) row.back() = "**" + row.back() + "**";
    os << "| " << fmt::format("{}", fmt::join(row, " | ")) << " |\n";
  }
  write_lists(os, c, "- ");
}

void write_csv(std::ostream& os, const comparison& c) {
  os << "benchmark,params,device,measurement,base_samples,new_samples,base_median_s,"
        "new_median_s,change,p_value,verdict,regression\n";
  for (const auto& r : c.rows) {
    os << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.benchmark),
                      csv_field(describe_params(r.params)), csv_field(r.device),
                      csv_field(r.measurement), r.base_samples, r.new_samples, r.result.base_median,
                      r.result.new_median, r.result.change, r.result.p_value,
                      to_string(r.result.outcome), r.regression());
  }
}

} // namespace

run_report load_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(fmt::format("{}: cannot open the result file", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  json j;
  try {
    j = json::parse(buffer.str());
  } catch (const json::parse_error& e) {
    throw usage_error(fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
  try {
    return report_from_json(j);
  } catch (const usage_error& e) {
    throw usage_error(fmt::format("{}: {}", path, e.what()));
  }
}

run_report merge_reports(std::span<const run_report> reports) {
  if (reports.empty()) return {};
  run_report merged;
  merged.meta = reports.front().meta;
  for (const auto& r : reports) {
    std::map<int, int> renumber;
    for (const auto& d : r.devices) {
      const auto same =
          std::find_if(merged.devices.begin(), merged.devices.end(), [&](const auto& m) {
            return m.info.id == d.info.id && m.info.name == d.info.name &&
                   m.info.pci_bus_id == d.info.pci_bus_id;
          });
      if (same != merged.devices.end()) {
        renumber[d.info.id] = d.info.id;
        continue;
      }
      int id = d.info.id;
      const bool taken = std::any_of(merged.devices.begin(), merged.devices.end(),
                                     [&](const auto& m) { return m.info.id == id; });
      if (taken) {
        for (const auto& m : merged.devices) id = std::max(id, m.info.id + 1);
      }
      renumber[d.info.id] = id;
      merged.devices.push_back(d);
      merged.devices.back().info.id = id;
    }
    for (const auto& res : r.results) {
      merged.results.push_back(res);
      const auto it = renumber.find(res.device);
      if (it != renumber.end()) merged.results.back().device = it->second;
    }
    if (&r != &reports.front() && r.meta.incomplete) {
      merged.meta.incomplete = true;
      if (!merged.meta.incomplete_reason.empty()) merged.meta.incomplete_reason += "; ";
      merged.meta.incomplete_reason += r.meta.incomplete_reason;
    }
  }
  return merged;
}

rank_test mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  rank_test t;
  const std::size_t n1 = a.size();
  const std::size_t n2 = b.size();
  if (n1 == 0 || n2 == 0) return t;
  const std::size_t n = n1 + n2;
  // (value, from a) sorted by value; tied values share the mean of their ranks.
  std::vector<std::pair<double, bool>> all;
  all.reserve(n);
  for (const double v : a) all.emplace_back(v, true);
  for (const double v : b) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0;
  double tie_term = 0; // sum of t^3 - t over groups of t tied values
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j); // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (all[k].second) rank_sum_a += mean_rank;
    }
    const auto t_count = static_cast<double>(j - i);
    tie_term += t_count * t_count * t_count - t_count;
    i = j;
  }
  const auto dn1 = static_cast<double>(n1);
  const auto dn2 = static_cast<double>(n2);
  const auto dn = static_cast<double>(n);
  t.u = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double mean_u = dn1 * dn2 / 2;
  const double var_u = dn1 * dn2 / 12.0 * ((dn + 1) - (n > 1 ? tie_term / (dn * (dn - 1)) : 0.0));
  if (var_u <= 0) return t; // every value tied: no evidence of a difference
  const double d = t.u - mean_u;
  const double corrected = std::max(std::abs(d) - 0.5, 0.0);
  t.z = std::copysign(corrected, d) / std::sqrt(var_u);
  t.p_value = std::min(1.0, std::erfc(std::abs(t.z) / std::sqrt(2.0)));
  return t;
}

double parse_percentage(std::string_view text, std::string_view option) {
  std::string s(text);
  if (!s.empty() && s.back() == '%') s.pop_back();
  double pct = -1;
  std::istringstream in(s);
  in >> pct;
  if (s.empty() || !in || !in.eof() || !std::isfinite(pct) || pct < 0 || pct >= 1000) {
    throw usage_error(
        fmt::format("{}: '{}' is not a percentage; expected e.g. 5% or 2.5", option, text));
  }
  return pct / 100.0;
}

std::string_view to_string(verdict v) noexcept {
  switch (v) {
  case verdict::faster: return "faster";
  case verdict::slower: return "slower";
  case verdict::same: return "same";
  case verdict::inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

measurement_verdict judge(std::span<const double> base, std::span<const double> candidate,
                          const compare_options& opts) {
  measurement_verdict v;
  v.base_median = median_of(base);
  v.new_median = median_of(candidate);
  if (base.size() < 2 || candidate.size() < 2) {
    v.note = "fewer than 2 samples on a side: no test possible";
    v.change = v.base_median > 0 ? v.new_median / v.base_median - 1 : 0;
    return v;
  }
  if (!(v.base_median > 0) || !std::isfinite(v.new_median)) {
    v.note = "base median is not a positive time";
    return v;
  }
  v.change = v.new_median / v.base_median - 1;
  v.p_value = mann_whitney_u(candidate, base).p_value;
  // A change of exactly the threshold is not beyond it (up to rounding in the ratio).
  const bool beyond = std::abs(v.change) > opts.threshold * (1 + 1e-9) + 1e-12;
  if (!beyond) {
    v.outcome = verdict::same;
  } else if (v.p_value < opts.alpha) {
    v.outcome = v.change > 0 ? verdict::slower : verdict::faster;
  } else {
    v.note = "change beyond the threshold but not significant: samples too noisy or too few";
  }
  return v;
}

std::size_t comparison::regressions() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.regression(); }));
}

comparison compare_reports(const run_report& base, const run_report& candidate,
                           const compare_options& opts) {
  const auto base_models = gpu_models(base);
  const auto new_models = gpu_models(candidate);
  if (!opts.allow_device_mismatch && !base_models.empty() && !new_models.empty() &&
      base_models != new_models) {
    throw usage_error(fmt::format(
        "BASE ran on {} but NEW on {}: timings from different GPU models are not comparable; "
        "pass --allow-device-mismatch to compare them anyway",
        fmt::join(base_models, ", "), fmt::join(new_models, ", ")));
  }
  comparison c;
  c.threshold = opts.threshold;
  c.alpha = opts.alpha;

  auto key_of = [&](const run_report& r, const result& res) {
    const auto device = (opts.allow_device_mismatch && res.device >= 0)
                            ? std::string("gpu")
                            : device_name(r, res.device);
    return fmt::format("{}\x1f{}\x1f{}", res.benchmark, res.params.dump(), device);
  };
  // Several results may share a key (the same point listed twice): pair them in order.
  std::map<std::string, std::vector<std::size_t>> pending;
  for (std::size_t i = 0; i < candidate.results.size(); ++i) {
    pending[key_of(candidate, candidate.results[i])].push_back(i);
  }
  std::vector<bool> used(candidate.results.size(), false);

  for (const auto& b : base.results) {
    const auto bdev = device_name(base, b.device);
    auto& queue = pending[key_of(base, b)];
    if (queue.empty()) {
      c.only_in_base.push_back(describe_result(b, bdev));
      continue;
    }
    const auto idx = queue.front();
    queue.erase(queue.begin());
    used[idx] = true;
    const auto& n = candidate.results[idx];
    const auto label = describe_result(b, bdev);
    if (!has_samples(b) || !has_samples(n)) {
      c.notes.push_back(fmt::format("{}: not compared (base {}{}, new {}{})", label,
                                    to_string(b.status), b.reason.empty() ? "" : ": " + b.reason,
                                    to_string(n.status), n.reason.empty() ? "" : ": " + n.reason));
      continue;
    }
    if (n.status == result_status::failed) {
      c.notes.push_back(fmt::format("{}: verification failed in NEW{}", label,
                                    n.reason.empty() ? "" : " (" + n.reason + ")"));
    }
    for (const auto& bm : b.measurements) {
      if (!opts.clock.empty() && opts.clock != (bm.clock == clock_kind::gpu ? "gpu" : "host"))
        continue;
      const auto* nm = n.find(bm.name);
      if (nm == nullptr) {
        c.only_in_base.push_back(fmt::format("{}: {}", label, bm.name));
        continue;
      }
      comparison_row row;
      row.benchmark = b.benchmark;
      row.device = bdev;
      if (opts.allow_device_mismatch) {
        const auto ndev = device_name(candidate, n.device);
        if (ndev != bdev) row.device = fmt::format("{} / {}", bdev, ndev);
      }
      row.params = b.params;
      row.measurement = bm.name;
      row.base_samples = bm.samples.size();
      row.new_samples = nm->samples.size();
      row.result = judge(bm.samples, nm->samples, opts);
      c.rows.push_back(std::move(row));
    }
    for (const auto& nm : n.measurements) {
      if (!opts.clock.empty() && opts.clock != (nm.clock == clock_kind::gpu ? "gpu" : "host"))
        continue;
      if (b.find(nm.name) == nullptr)
        c.only_in_new.push_back(fmt::format("{}: {}", label, nm.name));
    }
  }
  for (std::size_t i = 0; i < candidate.results.size(); ++i) {
    if (!used[i]) {
      const auto& n = candidate.results[i];
      c.only_in_new.push_back(describe_result(n, device_name(candidate, n.device)));
    }
  }
  return c;
}

int exit_code_for(const comparison& c) {
  return c.regressions() > 0 ? exit_code::verification_failed : exit_code::success;
}

json to_json(const comparison& c) {
  json rows = json::array();
  std::map<std::string, int> counts{{"faster", 0}, {"slower", 0}, {"same", 0}, {"inconclusive", 0}};
  for (const auto& r : c.rows) {
    const auto v = std::string(to_string(r.result.outcome));
    ++counts[v];
    json row = {{"benchmark", r.benchmark},
                {"device", r.device},
                {"params", r.params},
                {"measurement", r.measurement},
                {"base", {{"median", r.result.base_median}, {"samples", r.base_samples}}},
                {"new", {{"median", r.result.new_median}, {"samples", r.new_samples}}},
                {"change", r.result.change},
                {"p_value", r.result.p_value},
                {"verdict", v},
                {"regression", r.regression()}};
    if (!r.result.note.empty()) row["note"] = r.result.note;
    rows.push_back(std::move(row));
  }
  return {{"schema", "gpubench-compare/1"},
          {"threshold", c.threshold},
          {"alpha", c.alpha},
          {"test", "Mann-Whitney U, two-sided, normal approximation with tie and continuity "
                   "correction"},
          {"summary",
           {{"faster", counts["faster"]},
            {"slower", counts["slower"]},
            {"same", counts["same"]},
            {"inconclusive", counts["inconclusive"]},
            {"regressions", c.regressions()}}},
          {"rows", std::move(rows)},
          {"only_in_base", c.only_in_base},
          {"only_in_new", c.only_in_new},
          {"notes", c.notes}};
}

void write_comparison(std::ostream& os, const comparison& c, output_format format) {
  switch (format) {
  case output_format::json: os << to_json(c).dump(2) << '\n'; return;
  case output_format::md: write_markdown(os, c); return;
  case output_format::csv: write_csv(os, c); return;
  case output_format::table: write_table(os, c); return;
  }
}

} // namespace gpubench
