// compare: results matched by benchmark, identity parameters and device across the runs of each
// side; each measurement judged by the interval of its shift (gate_stats.hpp) against the
// threshold. Loading the files is in result_files.cpp, the output writers in compare_output.cpp.
#include "gpubench/gate/compare.hpp"
#include "compare_environment.hpp"
#include "gpubench/report/multi_gpu_report.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <set>

namespace gpubench {
namespace {

using gate_detail::check_environments;
using gate_detail::device_name;
using gate_detail::environment_of;

using nlohmann::json;

double median_of(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool has_samples(const result& r) {
  return r.status == result_status::ok || r.status == result_status::failed;
}

/// One result of one run of a side.
struct occurrence {
  std::size_t run = 0; ///< index among the side's runs
  const result_file* file = nullptr;
  const result* res = nullptr;
  const json* raw = nullptr; ///< the result's JSON, when the file's array lines up
};

struct side_index {
  std::vector<std::string> keys; ///< in order of first appearance
  std::map<std::string, std::vector<occurrence>> by_key;
  std::size_t runs = 0;
};

std::string key_of(const result_file& f, const result& res, bool ignore_device) {
  const auto device =
      (ignore_device && res.device >= 0) ? std::string("gpu") : device_name(f.report, res.device);
  // Multi-GPU: the results of a merged job are matched rank by rank.
  return fmt::format("{}\x1f{}\x1f{}\x1f{}", res.benchmark, identity_params(res.params).dump(),
                     device, res.rank);
}

/// Runs are the files of a side and, within a file, its "repeat" tags (gpubench run --repeat).
side_index index_side(std::span<const result_file> files, bool ignore_device) {
  side_index s;
  for (const auto& f : files) {
    const json* raw_results = nullptr;
    if (f.raw.is_object() && f.raw.contains("results") && f.raw["results"].is_array() &&
        f.raw["results"].size() == f.report.results.size())
      raw_results = &f.raw["results"];
    std::map<long long, std::size_t> run_of_repeat;
    for (std::size_t i = 0; i < f.report.results.size(); ++i) {
      const json* raw = raw_results != nullptr ? &(*raw_results)[i] : nullptr;
      long long repeat = 0;
      if (raw != nullptr && raw->is_object() && raw->contains("repeat") &&
          (*raw)["repeat"].is_number_integer())
        repeat = (*raw)["repeat"].get<long long>();
      const auto [it, fresh] = run_of_repeat.try_emplace(repeat, s.runs);
      if (fresh) ++s.runs;
      const auto& res = f.report.results[i];
      const auto key = key_of(f, res, ignore_device);
      auto& list = s.by_key[key];
      if (list.empty()) s.keys.push_back(key);
      list.push_back({it->second, &f, &res, raw});
    }
  }
  return s;
}

std::string describe(const occurrence& o) {
  return fmt::format("{} [{}{}] {}", o.res->benchmark, device_name(o.file->report, o.res->device),
                     rank_suffix(*o.res), params_text(o.res->params));
}

bool on_clock(const measurement& m, const std::string& clock) {
  return clock.empty() || clock == to_string(m.clock);
}

const json* raw_measurement(const occurrence& o, const std::string& name) {
  if (o.raw == nullptr || !o.raw->contains("measurements") || !(*o.raw)["measurements"].is_array())
    return nullptr;
  for (const auto& m : (*o.raw)["measurements"])
    if (m.is_object() && m.value("name", "") == name) return &m;
  return nullptr;
}

std::vector<std::string> measurement_names(const std::vector<occurrence>& occ,
                                           const std::string& clock) {
  std::vector<std::string> names;
  for (const auto& o : occ)
    for (const auto& m : o.res->measurements)
      if (on_clock(m, clock) && std::find(names.begin(), names.end(), m.name) == names.end())
        names.push_back(m.name);
  return names;
}

std::vector<double> logs_of(std::span<const double> v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (const double x : v)
    if (x > 0 && std::isfinite(x)) out.push_back(std::log(x));
  return out;
}

} // namespace

double parse_percentage(std::string_view text, std::string_view option) {
  const double pct = read_percent(text).value_or(-1); // the rules of every percentage
  if (pct < 0) {
    throw usage_error(
        fmt::format("{}: '{}' is not a percentage; expected e.g. 5% or 2.5", option, clip(text)));
  }
  if (pct >= 1000)
    throw usage_error(fmt::format("{}: '{}' is out of range; a percentage from 0 to below 1000%",
                                  option, clip(text)));
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

json identity_params(const json& params) {
  if (!params.is_object()) return params;
  json p = params;
  p.erase("save-samples");
  p.erase("output");
  if (p.contains("input")) p["input"] = "(folder)";
  return p;
}

namespace {

/// Why an interval gave no verdict, and what would give one.
std::string why_inconclusive(const measurement_verdict& v, const compare_options& opts,
                             double threshold, double allowance) {
  if (!v.bounded)
    return fmt::format("{} runs vs {}: too few for a {:.0f}% interval; give at least 3 runs a "
                       "side",
                       v.base_runs, v.new_runs, 100 * (1 - opts.alpha));
  if (!v.between_runs && v.lo > threshold)
    return fmt::format("one run on a side: between-run noise unknown, so a slowdown must lie "
                       "beyond {:.1f}% (threshold + {:.1f}%); give several runs a side",
                       100 * v.limit, 100 * allowance);
  if (!v.between_runs && v.lo >= -opts.margin() && v.hi <= opts.margin())
    return fmt::format("one run on a side: within {:.1f}% in this run, but between-run noise "
                       "({:.1f}% assumed) is unknown, so \"same\" cannot be shown; give at "
                       "least 3 runs a side",
                       100 * opts.margin(), 100 * allowance);
  return "interval neither beyond the threshold nor within the equivalence margin";
}

} // namespace

measurement_verdict judge_runs(const std::vector<std::vector<double>>& base,
                               const std::vector<std::vector<double>>& candidate,
                               const compare_options& opts, double threshold) {
  measurement_verdict v;
  std::vector<double> base_medians;
  std::vector<double> new_medians;
  std::vector<double> base_all;
  std::vector<double> new_all;
  for (const auto& r : base) {
    if (r.empty()) continue;
    base_medians.push_back(median_of(r));
    base_all.insert(base_all.end(), r.begin(), r.end());
  }
  for (const auto& r : candidate) {
    if (r.empty()) continue;
    new_medians.push_back(median_of(r));
    new_all.insert(new_all.end(), r.begin(), r.end());
  }
  v.base_runs = base_medians.size();
  v.new_runs = new_medians.size();
  v.lo = -std::numeric_limits<double>::infinity();
  v.hi = std::numeric_limits<double>::infinity();
  v.base_median = median_of(base_medians);
  v.new_median = median_of(new_medians);
  v.between_runs = v.base_runs >= 2 && v.new_runs >= 2;
  const double allowance = v.between_runs ? 0.0 : opts.run_noise;
  v.limit = threshold + allowance;
  if (base_medians.empty() || new_medians.empty()) {
    v.note = "no samples on a side";
    return v;
  }
  if (v.base_median > 0) v.change = v.new_median / v.base_median - 1;
  if (!(v.base_median > 0) || !(v.new_median > 0) || !std::isfinite(v.new_median)) {
    v.note = "a median is not a positive time";
    return v;
  }
  if (!v.between_runs && (base_all.size() < 2 || new_all.size() < 2)) {
    v.note = "fewer than 2 samples on a side: no interval possible";
    return v;
  }
  v.p_value = mann_whitney_u(new_all, base_all).p_value;
  const auto a = logs_of(v.between_runs ? base_medians : base_all);
  const auto b = logs_of(v.between_runs ? new_medians : new_all);
  const auto est = hodges_lehmann(a, b, 1 - opts.alpha);
  v.change = std::exp(est.estimate) - 1;
  v.bounded = est.bounded;
  v.coverage = est.coverage;
  if (est.bounded) {
    v.lo = std::exp(est.lo) - 1;
    v.hi = std::exp(est.hi) - 1;
  }
  gate_limits limits;
  limits.threshold = threshold;
  limits.same_margin = opts.margin();
  limits.allowance = allowance;
  v.outcome = judge_interval(v.lo, v.hi, v.bounded, limits);
  if (v.outcome == verdict::inconclusive) v.note = why_inconclusive(v, opts, threshold, allowance);
  return v;
}

measurement_verdict judge(std::span<const double> base, std::span<const double> candidate,
                          const compare_options& opts) {
  return judge_runs({std::vector<double>(base.begin(), base.end())},
                    {std::vector<double>(candidate.begin(), candidate.end())}, opts,
                    opts.threshold);
}

std::string_view to_string(gate_class g) noexcept {
  switch (g) {
  case gate_class::gpu: return "gpu";
  case gate_class::host: return "host";
  case gate_class::host_bound: return "host-bound";
  }
  return "gpu";
}

std::size_t comparison::regressions() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.regression(); }));
}

std::size_t comparison::rows_of(gate_class g) const noexcept {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [g](const auto& r) { return r.kind == g; }));
}

std::size_t comparison::gated_rows() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.gated; }));
}

std::optional<double> comparison::threshold_of(gate_class g) const noexcept {
  switch (g) {
  case gate_class::gpu: return threshold;
  case gate_class::host: return host_threshold;
  case gate_class::host_bound: return host_bound_threshold;
  }
  return threshold;
}

std::string gate_reason(const comparison_row& row) {
  const char* what = row.kind == gate_class::host         ? "host clock"
                     : row.kind == gate_class::host_bound ? "host-bound"
                                                          : "GPU clock";
  if (row.gated) return fmt::format("{}: gated at {:.1f}%", what, 100 * row.threshold);
  const double asked =
      row.kind == gate_class::host ? default_host_threshold : default_host_bound_threshold;
  return fmt::format("{}: not gated (--gate {} gates it at {:.1f}%)", what, to_string(row.kind),
                     100 * asked);
}

double comparison::compared_share() const noexcept {
  if (base_measurements == 0) return rows.empty() ? 0.0 : 1.0;
  return static_cast<double>(rows.size()) / static_cast<double>(base_measurements);
}

bool comparison::coverage_short() const noexcept {
  return rows.empty() || compared_share() + 1e-12 < min_compared;
}

/// The row of measurement `name` of one point, judged from the runs of each side that hold it.
comparison_row judged_row(const comparison& c, const std::vector<occurrence>& b_ok,
                          const std::vector<occurrence>& n_ok, const std::string& name,
                          const compare_options& opts) {
  const bool ignore_device = opts.allow_device_mismatch || opts.force;
  comparison_row row;
  row.benchmark = b_ok.front().res->benchmark;
  // Multi-GPU: a merged job's rows say which rank they are.
  row.device = device_name(b_ok.front().file->report, b_ok.front().res->device) +
               rank_suffix(*b_ok.front().res);
  if (ignore_device) {
    const auto ndev = device_name(n_ok.front().file->report, n_ok.front().res->device);
    if (ndev != row.device) row.device += " / " + ndev;
  }
  row.params = b_ok.front().res->params;
  row.measurement = name;
  std::vector<std::vector<double>> b_runs;
  std::vector<std::vector<double>> n_runs;
  const auto collect = [&](const std::vector<occurrence>& occ,
                           std::vector<std::vector<double>>& runs, std::size_t& count) {
    for (const auto& o : occ) {
      const auto* m = o.res->find(name);
      if (m == nullptr || !on_clock(*m, opts.clock)) continue;
      runs.push_back(m->samples);
      count += m->samples.size();
      if (m->clock == clock_kind::host) row.clock = clock_kind::host;
      if (m->host_bound) row.host_bound = true;
      if (const auto* rm = raw_measurement(o, name);
          rm != nullptr && rm->value("host_bound", false))
        row.host_bound = true;
    }
  };
  collect(b_ok, b_runs, row.base_samples);
  collect(n_ok, n_runs, row.new_samples);
  row.kind = row.clock == clock_kind::host ? gate_class::host
             : row.host_bound              ? gate_class::host_bound
                                           : gate_class::gpu;
  // A class not gated is still judged, at the GPU threshold, so its verdict reads the same.
  const auto own = c.threshold_of(row.kind);
  row.gated = own.has_value();
  row.threshold = own.value_or(opts.threshold);
  row.result = judge_runs(b_runs, n_runs, opts, row.threshold);
  return row;
}

comparison compare_runs(std::span<const result_file> base, std::span<const result_file> candidate,
                        const compare_options& opts) {
  const bool ignore_device = opts.allow_device_mismatch || opts.force;
  comparison c;
  c.threshold = opts.threshold;
  c.alpha = opts.alpha;
  c.same_margin = opts.margin();
  c.run_noise = opts.run_noise;
  c.host_threshold = opts.host_threshold;
  c.host_bound_threshold = opts.host_bound_threshold;
  c.min_compared = opts.min_compared;
  const auto bs = index_side(base, ignore_device);
  const auto ns = index_side(candidate, ignore_device);
  c.base_env = environment_of(base, bs.runs);
  c.new_env = environment_of(candidate, ns.runs);
  check_environments(c, opts);

  for (const auto& key : bs.keys) {
    const auto& b_occ = bs.by_key.at(key);
    const auto label = describe(b_occ.front());
    const auto b_names = measurement_names(b_occ, opts.clock);
    const auto it = ns.by_key.find(key);
    if (it == ns.by_key.end()) {
      c.only_in_base.push_back(label);
      c.base_measurements += b_names.size();
      continue;
    }
    const auto& n_occ = it->second;
    std::vector<occurrence> b_ok;
    std::vector<occurrence> n_ok;
    for (const auto& o : b_occ)
      if (has_samples(*o.res)) b_ok.push_back(o);
    for (const auto& o : n_occ) {
      if (!has_samples(*o.res)) continue;
      n_ok.push_back(o);
      if (o.res->status == result_status::failed)
        c.notes.push_back(fmt::format("{}: verification failed in NEW{}", label,
                                      o.res->reason.empty() ? "" : " (" + o.res->reason + ")"));
    }
    c.base_measurements += measurement_names(b_ok, opts.clock).size();
    if (b_ok.empty() || n_ok.empty()) {
      const auto& bo = *b_occ.front().res;
      const auto& no = *n_occ.front().res;
      c.notes.push_back(fmt::format("{}: not compared (base {}{}, new {}{})", label,
                                    to_string(bo.status), bo.reason.empty() ? "" : ": " + bo.reason,
                                    to_string(no.status),
                                    no.reason.empty() ? "" : ": " + no.reason));
      continue;
    }
    const auto n_names = measurement_names(n_ok, opts.clock);
    for (const auto& name : measurement_names(b_ok, opts.clock)) {
      if (std::find(n_names.begin(), n_names.end(), name) == n_names.end()) {
        c.only_in_base.push_back(fmt::format("{}: {}", label, name));
        continue;
      }
      c.rows.push_back(judged_row(c, b_ok, n_ok, name, opts));
    }
    for (const auto& name : n_names) {
      if (std::find(b_names.begin(), b_names.end(), name) == b_names.end())
        c.only_in_new.push_back(fmt::format("{}: {}", label, name));
    }
  }
  for (const auto& key : ns.keys)
    if (bs.by_key.find(key) == bs.by_key.end())
      c.only_in_new.push_back(describe(ns.by_key.at(key).front()));
  return c;
}

comparison compare_reports(const run_report& base, const run_report& candidate,
                           const compare_options& opts) {
  const std::vector<result_file> b{as_result_file(base, "BASE")};
  const std::vector<result_file> n{as_result_file(candidate, "NEW")};
  return compare_runs(b, n, opts);
}

int exit_code_for(const comparison& c) {
  if (c.regressions() > 0) return exit_code::verification_failed;
  if (c.coverage_short()) return exit_code::usage;
  return exit_code::success;
}

} // namespace gpubench
