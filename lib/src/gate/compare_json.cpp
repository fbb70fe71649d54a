// compare's JSON document (compare.hpp: to_json), schema gpubench-compare/1.
#include "gpubench/gate/compare.hpp"

#include <nlohmann/json.hpp>

namespace gpubench {
namespace {

using nlohmann::json;

json env_json(const side_environment& e) {
  json j{{"files", e.files},
         {"runs", e.runs},
         {"gpus", e.gpus},
         {"driver", e.driver},
         {"nvidia_driver", e.nvidia_driver},
         {"runtime", e.runtime},
         {"git", e.git},
         {"source_sha256", e.source_hashes},
         {"host", e.host},
         {"started_at", e.started_at},
         {"telemetry_flags", e.flags}};
  if (e.sm_clock_mhz) j["sm_clock_mhz"] = *e.sm_clock_mhz;
  if (e.mem_clock_mhz) j["mem_clock_mhz"] = *e.mem_clock_mhz;
  if (!e.test_slowdown.empty()) j["test_slowdown"] = e.test_slowdown;
  return j;
}

} // namespace

json to_json(const comparison& c) {
  json rows = json::array();
  std::map<std::string, int> counts{{"faster", 0}, {"slower", 0}, {"same", 0}, {"inconclusive", 0}};
  const auto bound = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  for (const auto& r : c.rows) {
    const auto v = std::string(to_string(r.result.outcome));
    ++counts[v];
    json row = {{"benchmark", r.benchmark},
                {"device", r.device},
                {"params", r.params},
                {"measurement", r.measurement},
                {"base",
                 {{"median", r.result.base_median},
                  {"samples", r.base_samples},
                  {"runs", r.result.base_runs}}},
                {"new",
                 {{"median", r.result.new_median},
                  {"samples", r.new_samples},
                  {"runs", r.result.new_runs}}},
                {"change", r.result.change},
                {"interval",
                 {{"lo", bound(r.result.lo)},
                  {"hi", bound(r.result.hi)},
                  {"coverage", r.result.coverage},
                  {"bounded", r.result.bounded}}},
                {"method", r.result.between_runs ? "between runs" : "within one run"},
                {"limit", r.result.limit},
                {"p_value", r.result.p_value},
                {"host_bound", r.host_bound},
                {"clock", to_string(r.clock)},
                {"gate_class", to_string(r.kind)},
                {"gated", r.gated},
                {"threshold", r.threshold},
                {"gate_reason", gate_reason(r)},
                {"verdict", v},
                {"regression", r.regression()}};
    if (!r.result.note.empty()) row["note"] = r.result.note;
    rows.push_back(std::move(row));
  }
  json j = {{"schema", "gpubench-compare/1"},
            {"threshold", c.threshold},
            {"alpha", c.alpha},
            {"same_margin", c.same_margin},
            {"run_noise", c.run_noise},
            {"same_code", same_code(c.base_env, c.new_env) ? json(*same_code(c.base_env, c.new_env))
                                                           : json(nullptr)},
            {"host_threshold", c.host_threshold ? json(*c.host_threshold) : json(nullptr)},
            {"host_bound_threshold",
             c.host_bound_threshold ? json(*c.host_bound_threshold) : json(nullptr)},
            {"test", "Hodges-Lehmann shift of log times with its Mann-Whitney (distribution-free) "
                     "interval: between runs from per-run medians, within one run from samples"},
            {"summary",
             {{"faster", counts["faster"]},
              {"slower", counts["slower"]},
              {"same", counts["same"]},
              {"inconclusive", counts["inconclusive"]},
              {"regressions", c.regressions()},
              {"gated", c.gated_rows()},
              {"not_gated",
               {{"host", c.host_threshold ? 0 : c.rows_of(gate_class::host)},
                {"host-bound", c.host_bound_threshold ? 0 : c.rows_of(gate_class::host_bound)}}},
              {"compared", c.rows.size()},
              {"base_measurements", c.base_measurements},
              {"compared_share", c.compared_share()},
              {"min_compared", c.min_compared},
              {"coverage_short", c.coverage_short()}}},
            {"environment", {{"base", env_json(c.base_env)}, {"new", env_json(c.new_env)}}},
            {"rows", std::move(rows)},
            {"only_in_base", c.only_in_base},
            {"only_in_new", c.only_in_new},
            {"notes", c.notes},
            {"warnings", c.warnings}};
  return j;
}

} // namespace gpubench
