// A history's groups and the comparison of each pair of consecutive runs, computed here so the
// page (python/gpubench/html_report.py) draws what compare decided without running it again.
#include "gpubench/gate/compare.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpubench {

using nlohmann::json;

namespace {

/// What files must share to be one line of a history: the schema, the GPUs' names, the benchmarks.
json group_key(const json& doc) {
  std::set<std::string> gpus;
  for (const auto& d : doc.value("devices", json::array()))
    gpus.insert(d.is_object() ? d.value("name", std::string("?")) : std::string("?"));
  if (gpus.empty()) gpus.insert("no GPU");
  std::set<std::string> benches;
  for (const auto& r : doc.value("results", json::array()))
    benches.insert(r.is_object() ? r.value("benchmark", std::string("?")) : std::string("?"));
  return json::array({doc.value("schema", json()), gpus, benches});
}

std::string started_at(const json& doc) {
  const auto meta = doc.value("meta", json::object());
  const auto it = meta.find("started_at");
  return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json compare_pair(const result_file& base, const result_file& fresh) {
  compare_options opts;
  opts.force = true; // a driver update between commits is noted, not refused
  opts.min_compared = 0;
  try {
    const comparison c = compare_runs(std::span(&base, 1), std::span(&fresh, 1), opts);
    std::ostringstream text;
    write_comparison(text, c, output_format::json);
    return json::parse(text.str());
  } catch (const std::exception& e) {
    return json{{"error", e.what()}};
  }
}

} // namespace

json history_comparisons(std::span<const result_file> files) {
  std::vector<std::pair<json, std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < files.size(); ++i) {
    json key = group_key(files[i].raw);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(std::move(key), std::vector<std::size_t>{});
      it = std::prev(groups.end());
    }
    it->second.push_back(i);
  }
  json out{{"groups", json::array()}};
  for (auto& [key, members] : groups) {
    const bool dated = std::all_of(members.begin(), members.end(), [&](std::size_t i) {
      return !started_at(files[i].raw).empty();
    });
    if (dated)
      std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
        return started_at(files[a].raw) < started_at(files[b].raw);
      });
    json comparisons = json::array();
    for (std::size_t k = 1; k < members.size(); ++k)
      comparisons.push_back(compare_pair(files[members[k - 1]], files[members[k]]));
    out["groups"].push_back({{"files", members}, {"dated", dated}, {"comparisons", comparisons}});
  }
  return out;
}

} // namespace gpubench
