#include "gpubench/scale/multi_gpu_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace gpubench {

using nlohmann::json;

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

json spread(const std::vector<double>& v) {
  return json{{"min", *std::min_element(v.begin(), v.end())},
              {"median", median_of(v)},
              {"max", *std::max_element(v.begin(), v.end())}};
}

/// Rates that add up across GPUs working at once (bandwidth, throughput); fractions of a peak do
/// not.
constexpr const char* summed_rates[] = {"bytes_per_s", "items_per_s"};

} // namespace

json aggregate_measurement(const std::vector<const measurement*>& members,
                           const std::vector<std::string>& hosts) {
  std::vector<double> times;
  times.reserve(members.size());
  for (const auto* m : members) times.push_back(m->stats.median);
  json out{{"name", members.front()->name}, {"ranks", members.size()}};
  out["median_s"] = spread(times);
  const double mid = median_of(times);
  out["straggler_ratio"] = mid > 0 ? *std::max_element(times.begin(), times.end()) / mid : 1.0;
  json rates = json::object();
  for (const char* key : summed_rates) {
    std::vector<double> v;
    for (const auto* m : members)
      if (const auto it = m->rates.find(key); it != m->rates.end() && it->is_number())
        v.push_back(it->get<double>());
    if (v.size() != members.size()) continue; // a rate some members lack is not summed
    json s = spread(v);
    double sum = 0;
    for (const double x : v) sum += x;
    s["sum"] = sum;
    rates[key] = s;
  }
  out["rates"] = rates;
  // Per node: the sum of each rate over the node's ranks; the slowest node against the median.
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t i = 0; i < members.size(); ++i) by_host[hosts[i]].push_back(i);
  if (by_host.size() > 1) {
    json nodes = json::array();
    std::vector<double> node_times;
    for (const auto& [host, idx] : by_host) {
      json node{{"host", host}, {"ranks", idx.size()}};
      json node_rates = json::object();
      for (const char* key : summed_rates) {
        if (!rates.contains(key)) continue;
        double sum = 0;
        for (const auto i : idx) sum += members[i]->rates.at(key).get<double>();
        node_rates[key] = sum;
      }
      node["rates"] = node_rates;
      double slowest = 0;
      for (const auto i : idx) slowest = std::max(slowest, times[i]);
      node["slowest_median_s"] = slowest;
      node_times.push_back(slowest);
      nodes.push_back(std::move(node));
    }
    out["nodes"] = nodes;
    const double node_mid = median_of(node_times);
    out["node_straggler_ratio"] =
        node_mid > 0 ? *std::max_element(node_times.begin(), node_times.end()) / node_mid : 1.0;
  }
  return out;
}

json to_json(const rank_record& r) {
  json j{{"rank", r.rank},
         {"host", r.host},
         {"local_rank", r.local_rank},
         {"local_device", r.local_device},
         {"gpu_name", r.gpu_name},
         {"uuid", r.uuid},
         {"pci_bus_id", r.pci_bus_id},
         {"status", r.status},
         {"reason", r.reason}};
  if (r.clock_offset_s) j["clock_offset_s"] = *r.clock_offset_s;
  if (r.clock_rtt_s) j["clock_rtt_s"] = *r.clock_rtt_s;
  if (r.cores_usable > 0) j["cores_usable"] = r.cores_usable;
  return j;
}

rank_record rank_record_from_json(const json& j) {
  rank_record r;
  r.rank = j.value("rank", 0);
  r.host = j.value("host", "");
  r.local_rank = j.value("local_rank", 0);
  r.local_device = j.value("local_device", -1);
  r.gpu_name = j.value("gpu_name", "");
  r.uuid = j.value("uuid", "");
  r.pci_bus_id = j.value("pci_bus_id", "");
  r.status = j.value("status", "ok");
  r.reason = j.value("reason", "");
  if (j.contains("clock_offset_s")) r.clock_offset_s = j.at("clock_offset_s").get<double>();
  if (j.contains("clock_rtt_s")) r.clock_rtt_s = j.at("clock_rtt_s").get<double>();
  r.cores_usable = j.value("cores_usable", 0);
  return r;
}

namespace {

/// The GPU a rank ran on, as one key across the job: two ranks with the same key share a GPU.
std::string gpu_key(const rank_record& r) {
  if (r.local_device < 0) return {};
  return r.host + "\x1f" + (r.uuid.empty() ? r.pci_bus_id : r.uuid);
}

json aggregate_point(const std::vector<const result*>& members,
                     const std::vector<std::string>& hosts, const std::optional<double>& skew,
                     const std::map<std::string, double>* measurement_skew,
                     const std::string& skew_clock) {
  const result& first = *members.front();
  json point{{"benchmark", first.benchmark}, {"params", first.params}};
  std::size_t measured = 0;
  for (const auto* r : members)
    if (r->status == result_status::ok || r->status == result_status::failed) ++measured;
  point["ranks"] = members.size();
  point["ranks_measured"] = measured;
  if (skew) {
    point["start_skew_s"] = *skew;
    point["start_skew_clock"] = "host";
  }
  // Measurements in the order the first member that has them lists them.
  std::vector<std::string> names;
  for (const auto* r : members)
    for (const auto& m : r->measurements)
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
  json ms = json::array();
  for (const auto& name : names) {
    std::vector<const measurement*> with;
    std::vector<std::string> with_hosts;
    for (std::size_t i = 0; i < members.size(); ++i)
      if (const auto* m = members[i]->find(name); m != nullptr && !m->samples.empty()) {
        with.push_back(m);
        with_hosts.push_back(hosts[i]);
      }
    if (with.empty()) continue;
    json a = aggregate_measurement(with, with_hosts);
    if (measurement_skew != nullptr)
      if (const auto it = measurement_skew->find(name); it != measurement_skew->end()) {
        a["start_skew_s"] = it->second;
        a["start_skew_clock"] = skew_clock;
      }
    ms.push_back(std::move(a));
  }
  point["measurements"] = ms;
  return point;
}

/// Adds the GPUs of `run` to `out.devices` (one entry per physical GPU of the job: host and bus
/// id, numbered in rank order) and renumbers its results; returns its ordinal -> merged id.
std::map<int, int> merge_devices(rank_run& run, run_report& out,
                                 std::map<std::string, int>& device_ids) {
  std::map<int, int> renumber;
  for (const auto& d : run.report.devices) {
    const std::string key = run.who.host + "\x1f" + d.info.pci_bus_id + "\x1f" +
                            std::to_string(d.info.pci_bus_id.empty() ? d.info.id : 0);
    auto [it, fresh] = device_ids.try_emplace(key, static_cast<int>(out.devices.size()));
    if (fresh) {
      out.devices.push_back(d);
      out.devices.back().info.id = it->second;
    }
    renumber[d.info.id] = it->second;
  }
  for (auto& r : run.report.results) {
    if (const auto it = renumber.find(r.device); it != renumber.end()) r.device = it->second;
    r.rank = run.who.rank;
    r.host = run.who.host;
  }
  return renumber;
}

/// The job's record of one rank: who it was, its GPU in the merged numbering, the ranks it
/// shared that GPU with.
json rank_entry(const rank_run& run, const std::vector<rank_run>& runs,
                const std::map<std::string, int>& users, const std::map<int, int>& renumber) {
  json rec = to_json(run.who);
  const auto key = gpu_key(run.who);
  rec["device"] = -1;
  for (const auto& [ordinal, id] : renumber)
    if (ordinal == run.who.local_device) rec["device"] = id;
  const bool shares = !key.empty() && users.at(key) > 1;
  rec["shares_gpu"] = shares;
  if (shares) {
    json others = json::array();
    for (const auto& o : runs)
      if (o.who.rank != run.who.rank && gpu_key(o.who) == key) others.push_back(o.who.rank);
    rec["shares_gpu_with"] = others;
  }
  return rec;
}

/// Marks `out` incomplete, with the reason, when this rank did not finish or its run was cut.
void note_incomplete(run_report& out, const rank_run& run) {
  if (!run.report.meta.incomplete && run.who.status == "ok") return;
  out.meta.incomplete = true;
  const std::string why =
      run.who.status != "ok"
          ? fmt::format("rank {} ({}): {}", run.who.rank, run.who.status, run.who.reason)
          : fmt::format("rank {}: {}", run.who.rank, run.report.meta.incomplete_reason);
  out.meta.incomplete_reason += (out.meta.incomplete_reason.empty() ? "" : "; ") + why;
}

/// The results point by point, each point's ranks in rank order, appended to `out.results`, and
/// the aggregate of each point beside them.
json merge_points(const std::vector<rank_run>& runs, run_report& out,
                  const measurement_skews& skews) {
  std::size_t points = 0;
  for (const auto& run : runs) points = std::max(points, run.report.results.size());
  std::vector<std::pair<std::size_t, std::size_t>> ranges; // each point's results in out.results
  std::vector<std::vector<double>> starts(points);
  for (std::size_t i = 0; i < points; ++i) {
    const std::size_t begin = out.results.size();
    for (const auto& run : runs) {
      if (i >= run.report.results.size()) continue;
      out.results.push_back(run.report.results[i]);
      if (i < run.point_start_s.size() && run.point_start_s[i])
        starts[i].push_back(*run.point_start_s[i]);
    }
    ranges.emplace_back(begin, out.results.size());
  }
  json agg_points = json::array();
  for (std::size_t i = 0; i < points; ++i) {
    std::vector<const result*> members;
    std::vector<std::string> member_hosts;
    for (std::size_t k = ranges[i].first; k < ranges[i].second; ++k) {
      members.push_back(&out.results[k]);
      member_hosts.push_back(out.results[k].host);
    }
    if (members.empty()) continue;
    std::optional<double> skew;
    if (!starts[i].empty())
      skew = *std::max_element(starts[i].begin(), starts[i].end()) -
             *std::min_element(starts[i].begin(), starts[i].end());
    const auto* mskew = i < skews.per_point.size() ? &skews.per_point[i] : nullptr;
    agg_points.push_back(aggregate_point(members, member_hosts, skew, mskew, skews.clock));
  }
  return agg_points;
}

} // namespace

run_report merge_rank_runs(std::vector<rank_run> runs, const std::string& mode,
                           const measurement_skews& skews) {
  std::sort(runs.begin(), runs.end(),
            [](const rank_run& a, const rank_run& b) { return a.who.rank < b.who.rank; });
  run_report out;
  if (runs.empty()) return out;
  out.meta = runs.front().report.meta;
  out.meta.incomplete = false; // recomputed from every rank below
  out.meta.incomplete_reason.clear();
  std::map<std::string, int> device_ids;
  std::map<std::string, int> users;
  for (const auto& run : runs) ++users[gpu_key(run.who)];
  json ranks = json::array();
  std::set<std::string> hosts;
  for (auto& run : runs) {
    if (!run.who.host.empty()) hosts.insert(run.who.host); // a lost rank's host is unknown
    const auto renumber = merge_devices(run, out, device_ids);
    ranks.push_back(rank_entry(run, runs, users, renumber));
    note_incomplete(out, run);
  }
  json agg_points = merge_points(runs, out, skews);
  std::size_t shared = 0;
  for (const auto& [key, n] : users)
    if (!key.empty() && n > 1) shared += n;
  out.ranks = std::move(ranks);
  out.aggregate = json{{"mode", mode},
                       {"ranks", runs.size()},
                       {"nodes", hosts.size()},
                       {"ranks_sharing_a_gpu", shared},
                       {"points", std::move(agg_points)}};
  return out;
}

} // namespace gpubench
