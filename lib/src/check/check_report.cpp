// A check run as a whole: the suite-wide checks, the fleet rule and the verdict per GPU
// (check_report.hpp).
#include "gpubench/check/check_report.hpp"
#include "gpubench/check/check_suite.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/stats.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace gpubench {

using nlohmann::json;

namespace {

std::string point_of(const result& r) {
  const auto it = r.params.find("check");
  return it != r.params.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// One GPU's run in a merged fleet: its node, its device and the rank that measured it (ranks
/// sharing a GPU each have their own run).
using gpu_key = std::tuple<std::string, int, int>;

gpu_key key_of(const result& r) { return {r.host, r.device, r.rank}; }

/// The (node, device) pairs that more than one rank measured.
std::set<std::pair<std::string, int>> shared_gpus(const run_report& rep) {
  std::map<std::pair<std::string, int>, std::set<int>> ranks;
  for (const auto& r : rep.results)
    if (r.benchmark == "check") ranks[{r.host, r.device}].insert(r.rank);
  std::set<std::pair<std::string, int>> out;
  for (const auto& [gpu, who] : ranks)
    if (who.size() > 1) out.insert(gpu);
  return out;
}

/// The key that tells one GPU from another across a merged fleet: its device record's index.
const device_record* device_of(const run_report& rep, int device) {
  for (const auto& d : rep.devices)
    if (d.info.id == device) return &d;
  return nullptr;
}

/// The checks of `point` as not run, for a point that ended before judging.
void add_not_run(gpu_checks& g, const std::string& point, const std::string& reason) {
  std::vector<std::string> ids;
  for (const auto& spec : check_specs())
    if (spec.point == point) ids.emplace_back(spec.id);
  if (ids.empty()) ids.push_back(point == "state" ? "state" : point);
  for (auto& id : ids) {
    check_outcome o;
    o.id = std::move(id);
    o.verdict = check_verdict::not_run;
    o.reason = fmt::format("the {} point could not run: {}", point, clip(reason, 300));
    if (point == "state") g.state_checked = false;
    g.checks.push_back(std::move(o));
  }
}

/// Each GPU's verdict (the worst of its checks), the counts, and the slowest GPU: the lowest ratio
/// to a measured reference below 1, named only where there are others to be slower than.
void tally(check_summary& s) {
  double worst_ratio = 2;
  for (auto& g : s.gpus) {
    for (const auto& o : g.checks) g.verdict = worse(g.verdict, o.verdict);
    if (g.verdict == check_verdict::fail)
      ++s.failed;
    else if (g.verdict == check_verdict::warn)
      ++s.warned;
    else if (g.verdict == check_verdict::pass)
      ++s.passed;
    if (g.outlier) ++s.outliers;
    for (const auto& o : g.checks) {
      const auto* spec = find_check_spec(o.id);
      if (spec == nullptr || !o.ratio || o.reference_kind != "measured" || !spec->higher_is_better)
        continue;
      if (*o.ratio < worst_ratio) {
        worst_ratio = *o.ratio;
        s.slowest = gpu_name(g);
      }
    }
  }
  if (worst_ratio >= 1 || s.gpus.size() < 2) s.slowest.clear(); // nobody below, or nobody else
}

} // namespace

std::string gpu_name(const gpu_checks& g) {
  return fmt::format("{} GPU {}{} ({})", g.host, g.device,
                     g.shared ? fmt::format(" rank {}", g.rank) : std::string(), g.pci_bus_id);
}

bool is_check_report(const run_report& r) {
  return std::any_of(r.results.begin(), r.results.end(),
                     [](const result& x) { return x.benchmark == "check"; });
}

check_summary summarize_checks(const run_report& rep) {
  check_summary s;
  std::map<gpu_key, std::size_t> index; // -> gpus entry
  const auto shared = shared_gpus(rep);
  for (std::size_t i = 0; i < rep.results.size(); ++i) {
    const result& r = rep.results[i];
    if (r.benchmark != "check") continue;
    auto [it, fresh] = index.try_emplace(key_of(r), s.gpus.size());
    if (fresh) {
      gpu_checks g;
      g.device = r.device;
      g.rank = r.rank;
      g.shared = shared.contains({r.host, r.device});
      g.host = r.host.empty() ? rep.meta.host.name : r.host;
      if (const auto* d = device_of(rep, r.device)) {
        g.model = d->info.name;
        g.uuid = d->info.uuid;
        g.pci_bus_id = d->info.pci_bus_id;
      }
      s.gpus.push_back(std::move(g));
    }
    gpu_checks& g = s.gpus[it->second];
    const auto c = r.derived.find("check");
    if (c == r.derived.end()) {
      // A point the runner recorded as skipped or failed before it judged anything: its checks
      // are listed as not run, with the reason, never left out.
      if (r.status != result_status::ok) add_not_run(g, point_of(r), r.reason);
      continue;
    }
    if (!c->is_array())
      throw usage_error(fmt::format("results[{}].derived.check: expected an array", i));
    for (std::size_t k = 0; k < c->size(); ++k) {
      auto o = check_outcome_from_json((*c)[k], fmt::format("results[{}].derived.check[{}]", i, k));
      if (o.id == "state" && o.verdict == check_verdict::not_run) g.state_checked = false;
      if (!o.outlier.is_null()) g.outlier = true;
      g.checks.push_back(std::move(o));
    }
  }
  tally(s);
  return s;
}

std::vector<json> fleet_outliers(const check_spec& spec, const std::vector<double>& figures) {
  std::vector<json> out(figures.size());
  if (figures.size() < 2) return out;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    std::vector<double> others;
    others.reserve(figures.size());
    for (std::size_t j = 0; j < figures.size(); ++j)
      if (j != i) others.push_back(figures[j]);
    const double med = summarize(others).median;
    if (!(med > 0)) continue;
    const double mad = others.size() >= 3 ? scaled_mad(others, med) : 0;
    const double deficit =
        spec.higher_is_better ? (med - figures[i]) / med : (figures[i] - med) / med;
    const double gap = std::abs(figures[i] - med);
    const bool beyond_mads = mad <= 0 || gap > 4 * mad;
    if (deficit > spec.fail_fraction && beyond_mads)
      out[i] = {{"peers", others.size()},
                {"peer_median", med},
                {"deficit", deficit},
                {"mads", mad > 0 ? json(gap / mad) : json()}};
  }
  return out;
}

namespace {

json* check_list(result& r) {
  auto it = r.derived.find("check");
  if (it == r.derived.end() || !it->is_array()) return nullptr;
  return &*it;
}

/// The SM clock under load: the FP32 roof's kernel row (the GPU's own count) against NVML's
/// highest SM clock.
check_outcome judge_sm_clock(const result* fp32, const json& state) {
  check_outcome o;
  o.id = "sm_clock";
  o.reference_kind = "rule";
  o.unit = "MHz";
  const measurement* m = fp32 != nullptr ? fp32->find("kernel") : nullptr;
  // Read as a saved file may hold them (check --from): a number, or not known.
  const auto number = [](const json& j, const char* key) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  const double mhz = m != nullptr ? number(m->sm_clock, "median_mhz") : 0.0;
  const double max = number(state, "sm_clock_max_mhz");
  if (!(mhz > 0) || !(max > 0)) {
    o.reason = "SM clock under load not checked: no counted clock or no NVML maximum";
    return o;
  }
  o.figure = mhz;
  o.reference = max;
  o.ratio = mhz / max;
  if (mhz >= 0.9 * max) {
    o.verdict = check_verdict::pass;
    o.reason =
        fmt::format("SM clock {:.0f} MHz under the FP32 load (highest {:.0f} MHz)", mhz, max);
    return o;
  }
  std::string why;
  const auto limit = state.find("power_limit_w");
  const auto def = state.find("power_default_limit_w");
  if (limit != state.end() && def != state.end() && limit->is_number() && def->is_number() &&
      limit->get<double>() < 0.95 * def->get<double>())
    why = fmt::format(": power cap {:.0f} W below the default {:.0f} W", limit->get<double>(),
                      def->get<double>());
  else if (m != nullptr && m->telemetry.contains("flags") && !m->telemetry["flags"].empty())
    why = fmt::format(": NVML saw {}", m->telemetry["flags"].dump());
  o.verdict = check_verdict::warn;
  o.reason = fmt::format("SM clock held at {:.0f} MHz under load, {:.0f}% of its highest {:.0f} "
                         "MHz{}",
                         mhz, 100 * mhz / max, max, why);
  return o;
}

/// Throttling and other processes seen by NVML during any row of the suite.
check_outcome judge_throttling(const std::vector<const result*>& results) {
  std::map<std::string, std::set<std::string>> seen; // flag -> points
  for (const auto* r : results)
    for (const auto& m : r->measurements) {
      const auto f = m.telemetry.find("flags");
      if (f == m.telemetry.end() || !f->is_array()) continue;
      for (const auto& flag : *f)
        if (flag.is_string() && flag != "power_cap")
          seen[flag.get<std::string>()].insert(point_of(*r));
    }
  check_outcome o;
  o.id = "throttling";
  o.reference_kind = "rule";
  if (seen.empty()) {
    o.verdict = check_verdict::pass;
    o.reason = "no thermal or hardware slowdown and no other process during the suite";
    return o;
  }
  std::vector<std::string> parts;
  parts.reserve(seen.size());
  for (const auto& [flag, points] : seen)
    parts.push_back(fmt::format("{} during {}",
                                flag == "contention" ? "another process on the GPU" : flag,
                                fmt::join(points, ", ")));
  o.verdict = check_verdict::warn;
  o.reason = fmt::format("{}: the figures may be low; {}", fmt::join(parts, "; "),
                         seen.contains("contention") ? "run the check on an idle GPU"
                                                     : "check the cooling and the power supply");
  return o;
}

} // namespace

void finish_checks(run_report& rep) {
  // Per GPU: its results, the state result the suite-wide checks join.
  std::map<gpu_key, std::vector<result*>> by_gpu;
  for (auto& r : rep.results)
    if (r.benchmark == "check") by_gpu[key_of(r)].push_back(&r);
  for (auto& [key, results] : by_gpu) {
    result* state = nullptr;
    const result* fp32 = nullptr;
    std::vector<const result*> all;
    for (auto* r : results) {
      all.push_back(r);
      if (point_of(*r) == "state") state = r;
      if (point_of(*r) == "fp32") fp32 = r;
    }
    if (state == nullptr || check_list(*state) == nullptr) continue;
    const json st = state->derived.value("state", json::object());
    check_list(*state)->push_back(to_json(judge_sm_clock(fp32, st)));
    check_list(*state)->push_back(to_json(judge_throttling(all)));
  }
  // The fleet rule: per model and check, across every GPU that has the figure.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<json*, std::string>>> groups;
  const auto shared = shared_gpus(rep);
  for (auto& r : rep.results) {
    if (r.benchmark != "check") continue;
    json* list = check_list(r);
    const auto* dev = device_of(rep, r.device);
    if (list == nullptr || dev == nullptr) continue;
    gpu_checks who;
    who.host = r.host.empty() ? rep.meta.host.name : r.host;
    who.device = r.device;
    who.rank = r.rank;
    who.shared = shared.contains({r.host, r.device});
    who.pci_bus_id = dev->info.pci_bus_id;
    for (auto& o : *list)
      if (o.is_object() && o.contains("figure") && o["figure"].is_number() &&
          find_check_spec(o.value("id", "")) != nullptr)
        groups[{dev->info.name, o["id"].get<std::string>()}].emplace_back(&o, gpu_name(who));
  }
  for (auto& [key, entries] : groups) {
    std::vector<double> figures;
    for (const auto& e : entries) figures.push_back((*e.first)["figure"].get<double>());
    const auto found = fleet_outliers(*find_check_spec(key.second), figures);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (found[i].is_null()) continue;
      json& o = *entries[i].first;
      o["outlier"] = found[i];
      o["outlier"]["gpu"] = entries[i].second;
      if (o["verdict"] == "pass") o["verdict"] = "warn";
      o["reason"] = fmt::format("{}; {} is an outlier: {:.1f}% worse than the median of its {} "
                                "peers of this model",
                                o.value("reason", ""), entries[i].second,
                                100 * found[i]["deficit"].get<double>(),
                                found[i]["peers"].get<std::size_t>());
    }
  }
}

void rejudge_checks(run_report& rep, const reference_set& references) {
  // The highest SM clock NVML gave in each GPU's state point: the compute checks' theory.
  std::map<gpu_key, double> max_mhz;
  for (const auto& r : rep.results) {
    if (r.benchmark != "check" || point_of(r) != "state") continue;
    const auto st = r.derived.find("state");
    if (st == r.derived.end() || !st->is_object()) continue;
    const auto m = st->find("sm_clock_max_mhz");
    if (m != st->end() && m->is_number() && m->get<double>() > 0)
      max_mhz[key_of(r)] = m->get<double>();
  }
  for (std::size_t i = 0; i < rep.results.size(); ++i) {
    result& r = rep.results[i];
    json* list = r.benchmark == "check" ? check_list(r) : nullptr;
    if (list == nullptr) continue;
    const std::string point = point_of(r);
    // What was recorded, read as `report` reads it: a malformed outcome stops here, named.
    std::vector<check_outcome> recorded;
    for (std::size_t j = 0; j < list->size(); ++j)
      recorded.push_back(
          check_outcome_from_json((*list)[j], fmt::format("results[{}].derived.check[{}]", i, j)));
    if (point == "state") {
      json kept = json::array();
      for (std::size_t j = 0; j < recorded.size(); ++j)
        if (recorded[j].id != "sm_clock" && recorded[j].id != "throttling")
          kept.push_back((*list)[j]);
      *list = std::move(kept);
      continue;
    }
    const auto* dev = device_of(rep, r.device);
    if (dev == nullptr)
      throw usage_error(fmt::format("results[{}]: check point '{}' names device {}, which the "
                                    "file's devices do not list",
                                    i, clip(point), r.device));
    const auto clock = max_mhz.find(key_of(r));
    auto fresh = judge_point(point, r, dev->info,
                             clock != max_mhz.end() ? std::optional(clock->second) : std::nullopt,
                             references);
    json out = json::array();
    for (auto& o : fresh) {
      for (const auto& old : recorded)
        if (old.id == o.id) o.tries = old.tries;
      out.push_back(to_json(o));
    }
    *list = std::move(out);
  }
}

reference_set build_reference(const run_report& rep) {
  // model -> check -> the per-sample figures of each run.
  std::map<std::string, std::map<std::string, std::vector<std::vector<double>>>> runs;
  for (const auto& r : rep.results) {
    if (r.benchmark != "check" || r.status != result_status::ok) continue;
    const auto* dev = device_of(rep, r.device);
    if (dev == nullptr) continue;
    for (const auto& spec : check_specs()) {
      if (spec.point != point_of(r)) continue;
      const auto* m = r.find(spec.row);
      if (m == nullptr) continue;
      auto figures = row_sample_figures(spec, *m);
      if (!figures.empty())
        runs[dev->info.name][std::string(spec.id)].push_back(std::move(figures));
    }
  }
  reference_set out;
  out.source = "built";
  for (auto& [model, checks] : runs) {
    model_reference m;
    m.model = model;
    m.driver = rep.meta.nvidia_driver.empty() ? rep.meta.cuda_driver : rep.meta.nvidia_driver;
    m.runtime = rep.meta.cuda_runtime;
    m.date = rep.meta.started_at.substr(0, 10);
    for (auto& [id, per_run] : checks) m.checks.emplace(id, reference_entry_from_runs(per_run));
    out.models.push_back(std::move(m));
  }
  return out;
}

int check_exit_code(const check_summary& s, bool strict) {
  if (s.failed > 0 || (strict && s.warned > 0)) return 1;
  return 0;
}

} // namespace gpubench
