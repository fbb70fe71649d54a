// compare's sides as environments: the GPUs, drivers, code, telemetry flags and clocks each side's
// files recorded, and the refusal (or, forced, the warning) when they are not comparable.
#include "compare_environment.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/stats.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace gpubench {
namespace {

using nlohmann::json;

std::set<std::string> gpu_models(const run_report& r) {
  std::set<std::string> names;
  for (const auto& res : r.results) {
    if (res.device >= 0) names.insert(gate_detail::device_name(r, res.device));
  }
  return names;
}

const std::set<std::string>& flagged_flags() {
  static const std::set<std::string> f{"thermal", "hw_slowdown", "contention"};
  return f;
}

/// Every measurement's telemetry object of a raw result file.
std::vector<const json*> telemetry_objects(const json& raw) {
  std::vector<const json*> out;
  const auto array_in = [](const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_array();
  };
  if (!array_in(raw, "results")) return out;
  for (const auto& r : raw["results"]) {
    if (!array_in(r, "measurements")) continue;
    for (const auto& m : r["measurements"])
      if (m.is_object() && m.contains("telemetry") && m["telemetry"].is_object())
        out.push_back(&m["telemetry"]);
  }
  return out;
}

/// The telemetry a side's files recorded: its flags, and the medians of its clocks.
void add_telemetry(const json& t, std::set<std::string>& flags, std::vector<double>& sm,
                   std::vector<double>& mem) {
  if (t.contains("flags") && t["flags"].is_array())
    for (const auto& x : t["flags"])
      if (x.is_string()) flags.insert(x.get<std::string>());
  const auto clock_median = [&](const char* key, std::vector<double>& into) {
    if (t.contains(key) && t[key].is_object() && t[key].contains("median") &&
        t[key]["median"].is_number())
      into.push_back(t[key]["median"].get<double>());
  };
  clock_median("sm_clock_mhz", sm);
  clock_median("mem_clock_mhz", mem);
}

/// The test slowdown the first file that has one ran under ("" when none).
std::string test_slowdown_of(std::span<const result_file> files) {
  for (const auto& f : files)
    if (f.raw.is_object() && f.raw.contains("meta") && f.raw["meta"].is_object() &&
        f.raw["meta"].contains("test_slowdown")) {
      const auto& t = f.raw["meta"]["test_slowdown"];
      return t.is_string() ? t.get<std::string>() : t.dump();
    }
  return {};
}

std::set<std::string> flagged(const side_environment& e) {
  std::set<std::string> out;
  for (const auto& f : e.flags)
    if (flagged_flags().count(f) != 0) out.insert(f);
  return out;
}

} // namespace

namespace gate_detail {

std::string device_name(const run_report& r, int id) {
  if (id < 0) return "cpu";
  for (const auto& d : r.devices) {
    if (d.info.id == id) return d.info.name;
  }
  return fmt::format("device {}", id);
}

side_environment environment_of(std::span<const result_file> files, std::size_t runs) {
  side_environment e;
  e.runs = runs;
  std::set<std::string> gpus;
  std::set<std::string> flags;
  std::vector<double> sm;
  std::vector<double> mem;
  for (const auto& f : files) {
    e.files.push_back(f.path);
    if (std::find(e.source_hashes.begin(), e.source_hashes.end(), f.report.meta.source_hash) ==
        e.source_hashes.end())
      e.source_hashes.push_back(f.report.meta.source_hash);
    for (const auto& g : gpu_models(f.report)) gpus.insert(g);
    for (const json* t : telemetry_objects(f.raw)) add_telemetry(*t, flags, sm, mem);
  }
  e.gpus.assign(gpus.begin(), gpus.end());
  e.flags.assign(flags.begin(), flags.end());
  if (!sm.empty()) e.sm_clock_mhz = summarize(sm).median;
  if (!mem.empty()) e.mem_clock_mhz = summarize(mem).median;
  if (!files.empty()) {
    const auto& m = files.front().report.meta;
    e.driver = m.cuda_driver;
    e.nvidia_driver = m.nvidia_driver;
    e.runtime = m.cuda_runtime;
    e.git = m.git;
    e.host = m.host.name;
    e.started_at = m.started_at;
  }
  e.test_slowdown = test_slowdown_of(files);
  return e;
}

/// Refuses what is not comparable (exit 2) unless forced; forced differences become warnings.
void check_environments(comparison& c, const compare_options& opts) {
  const auto& b = c.base_env;
  const auto& n = c.new_env;
  const auto refuse = [&](const std::string& what, bool allowed,
                          const char* hint = "pass --force to compare them anyway",
                          const char* given = "--force") {
    if (!allowed) throw usage_error(what + "; " + hint);
    c.warnings.push_back(fmt::format("{} (compared anyway: {})", what, given));
  };
  if (!b.gpus.empty() && !n.gpus.empty() && b.gpus != n.gpus) {
    refuse(fmt::format("BASE ran on {} but NEW on {}: timings from different GPU models are not "
                       "comparable",
                       fmt::join(b.gpus, ", "), fmt::join(n.gpus, ", ")),
           opts.force || opts.allow_device_mismatch,
           "pass --allow-device-mismatch (or --force) to compare them anyway",
           opts.allow_device_mismatch ? "--allow-device-mismatch" : "--force");
  }
  if (!b.driver.empty() && !n.driver.empty() && b.driver != n.driver) {
    refuse(
        fmt::format("BASE ran with CUDA driver {} but NEW with {}: a driver change moves timings",
                    b.driver, n.driver),
        opts.force);
  }
  if (!b.nvidia_driver.empty() && !n.nvidia_driver.empty() && b.nvidia_driver != n.nvidia_driver) {
    refuse(fmt::format("BASE ran with NVIDIA driver {} but NEW with {}: a driver change moves "
                       "timings",
                       b.nvidia_driver, n.nvidia_driver),
           opts.force);
  } else if (b.nvidia_driver.empty() != n.nvidia_driver.empty()) {
    c.warnings.push_back(fmt::format(
        "{} records no NVIDIA driver version (written before it was recorded, or on a machine "
        "without a driver): the drivers were not checked, only the CUDA level",
        b.nvidia_driver.empty() ? "BASE" : "NEW"));
  }
  const auto bf = flagged(b);
  const auto nf = flagged(n);
  if (bf != nf) {
    refuse(fmt::format("telemetry flags differ: BASE [{}], NEW [{}] (thermal, hw_slowdown or "
                       "contention on one side only: that side's timings are not representative)",
                       fmt::join(bf, ", "), fmt::join(nf, ", ")),
           opts.force);
  }
  for (const auto* e : {&b, &n}) {
    if (!e->test_slowdown.empty())
      c.warnings.push_back(fmt::format(
          "{} was run with the test-only GPUBENCH_TEST_SLOWDOWN={} (a deliberate delay)",
          e == &b ? "BASE" : "NEW", e->test_slowdown));
  }
}

} // namespace gate_detail

std::optional<bool> same_code(const side_environment& base, const side_environment& fresh) {
  std::set<std::string> all(base.source_hashes.begin(), base.source_hashes.end());
  all.insert(fresh.source_hashes.begin(), fresh.source_hashes.end());
  const bool unknown = all.erase("") > 0;
  if (all.size() > 1) return false;
  if (unknown || all.empty()) return std::nullopt;
  return true;
}

std::string code_line(const side_environment& base, const side_environment& fresh) {
  const auto side = [](const side_environment& e) {
    std::vector<std::string> shown;
    for (const auto& h : e.source_hashes)
      shown.push_back(h.empty() ? std::string("not recorded") : h.substr(0, 12));
    return fmt::format("{}", fmt::join(shown, " and "));
  };
  const auto same = same_code(base, fresh);
  if (same && *same) return fmt::format("Code: same (sources sha256 {})", side(base));
  if (same)
    return fmt::format("Code: DIFFERS (sources sha256: BASE {}, NEW {})", side(base), side(fresh));
  return fmt::format("Code: not known to be the same (sources sha256: BASE {}, NEW {})", side(base),
                     side(fresh));
}

} // namespace gpubench
