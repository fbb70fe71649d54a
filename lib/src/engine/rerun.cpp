#include "gpubench/engine/rerun.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpubench {
namespace {

using nlohmann::json;

/// One recorded parameter value as the command line spells it (a list joined by commas).
std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_number()) return v.dump();
  if (v.is_array()) {
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : ",") + value_text(e);
    return out;
  }
  return v.dump();
}

std::string argv_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return clip(out, 300);
}

/// Whether `text` planned on a GPU (cpu-only off) gives exactly the parameters `recorded`.
bool plans_as_gpu_point(const benchmark& b, const param_values& text, common_options opts,
                        const json& recorded) {
  opts.cpu_only = false;
  if (opts.devices.empty()) opts.devices = {0};
  try {
    const auto planned = plan_points(b, with_defaults(b, text), opts);
    if (planned.size() != 1) return false;
    json params = planned.front().params;
    params.erase("device");
    return params == recorded;
  } catch (const usage_error&) {
    return false;
  }
}

} // namespace

run_report load_rerun_source(const std::string& path) {
  const json j = load_untrusted_json(path, "result file");
  const auto where = clip(path, 200);
  if (!j.is_object() || !j.contains("schema") || !j.at("schema").is_string())
    throw usage_error(fmt::format("{}: not a gpubench result file (no \"schema\")", where));
  const auto schema = j.at("schema").get<std::string>();
  if (schema != schema_id)
    throw usage_error(fmt::format("{}: schema \"{}\" is not {}, the schema this gpubench reads and "
                                  "writes; rerun it with the gpubench that wrote it",
                                  where, clip(schema, 40), schema_id));
  run_report r;
  try {
    r = report_from_json(j);
  } catch (const usage_error& e) {
    throw usage_error(fmt::format("{}: {}", where, e.what()));
  }
  if (!r.meta.options.is_object())
    throw usage_error(fmt::format(
        "{}: records no measurement options (meta.options): it was written by gpubench {}, "
        "before results recorded them, so it cannot be repeated exactly; run its original "
        "command instead: {}",
        where, r.meta.version.empty() ? "(unknown version)" : clip(r.meta.version, 60),
        r.meta.argv.empty() ? std::string("(not recorded)") : argv_text(r.meta.argv)));
  if (r.results.empty())
    throw usage_error(fmt::format("{}: holds no results; there is nothing to repeat", where));
  return r;
}

void apply_recorded_options(const json& record, common_options& opts, std::string& device_spec) {
  for (const auto& [key, v] : record.items())
    if (find_option(key) == nullptr)
      throw usage_error(fmt::format("meta.options.{}: an option this gpubench does not have (the "
                                    "file comes from a newer build)",
                                    clip(key, 40)));
  // In the table's order: --warm before the --l2-flush it implies.
  for (const auto& spec : measurement_options()) {
    if (!record.contains(spec.name)) continue; // an older record: the default
    const json& v = record.at(spec.name);
    // A --cpu-only run records no device.
    if (spec.kind == option_kind::devices && v.is_array() && v.empty()) continue;
    spec.set({opts, device_spec},
             read_option_value(spec, v, fmt::format("meta.options.{}", spec.name)));
  }
}

std::vector<planned_point> rerun_points(const run_report& report, const common_options& opts,
                                        std::span<const benchmark> catalog) {
  if (report.results.size() > max_points)
    throw usage_error(fmt::format("the result file holds {} results; a rerun measures at most {} "
                                  "points, as a run file and every command does",
                                  report.results.size(), max_points));
  std::vector<planned_point> points;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const result& r = report.results[i];
    const auto where = fmt::format("results[{}] ({})", i, clip(r.benchmark, 40));
    const benchmark* b = find_benchmark(catalog, r.benchmark);
    if (b == nullptr) {
      std::vector<std::string> names;
      for (const auto& known : catalog) names.push_back(known.name);
      throw usage_error(fmt::format("{}: this gpubench has no benchmark \"{}\" (it has {})", where,
                                    clip(r.benchmark, 40), fmt::join(names, ", ")));
    }
    param_values text;
    for (const auto& [key, v] : r.params.items())
      for (const auto& spec : b->params)
        if (spec.name == key) text[key] = value_text(v);
    common_options here = opts;
    if (r.device >= 0) here.devices = {r.device};
    std::vector<planned_point> planned;
    try {
      planned = plan_points(*b, with_defaults(*b, text), here);
    } catch (const usage_error& e) {
      throw usage_error(fmt::format("{}: {}", where, e.what()));
    }
    if (planned.size() != 1)
      throw usage_error(fmt::format("{}: this gpubench plans its parameters into {} points, not "
                                    "one",
                                    where, planned.size()));
    json params = planned.front().params;
    params.erase("device");
    if (params != r.params) {
      std::string differ;
      for (const auto& [key, v] : r.params.items())
        if (!params.contains(key) || params.at(key) != v)
          differ += (differ.empty() ? "" : ", ") + clip(key, 40);
      for (const auto& [key, v] : params.items())
        if (!r.params.contains(key)) differ += (differ.empty() ? "" : ", ") + clip(key, 40);
      if (here.cpu_only && plans_as_gpu_point(*b, text, here, r.params))
        throw usage_error(fmt::format("{}: the option cpu-only is on (in meta.options or given as "
                                      "--cpu-only), but this result is a GPU point (its {} are "
                                      "GPU parameters): rerun it without cpu-only",
                                      where, differ));
      throw usage_error(fmt::format("{}: this gpubench plans these parameters differently ({}): "
                                    "the file comes from another build",
                                    where, differ));
    }
    points.push_back(std::move(planned.front()));
  }
  return points;
}

} // namespace gpubench
