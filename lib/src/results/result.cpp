#include "gpubench/results/result.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gpubench {

using nlohmann::json;

void verification::merge(const verification& other, const std::string& label) {
  if (!other.performed) return;
  passed = (performed ? passed : true) && other.passed;
  performed = true;
  if (method.empty()) method = other.method;
  tolerance = std::max(tolerance, other.tolerance);
  max_abs_error = std::max(max_abs_error, other.max_abs_error);
  checked += other.checked;
  mismatches += other.mismatches;
  json d = other.details;
  d["passed"] = other.passed;
  d["method"] = other.method;
  d["tolerance"] = other.tolerance;
  d["max_abs_error"] = other.max_abs_error;
  d["checked"] = other.checked;
  d["mismatches"] = other.mismatches;
  details[label] = std::move(d);
}

double counted_sm_clock_mhz(const measurement& m) {
  if (const double mhz = m.sm_clock.value("median_mhz", 0.0); mhz > 0) return mhz;
  if (const auto it = m.telemetry.find("sm_clock_mhz"); it != m.telemetry.end() && it->is_object())
    return it->value("median", 0.0);
  return 0;
}

void add_roof_fraction(measurement& m, const device_record& dev) {
  const double mhz = counted_sm_clock_mhz(m);
  const double per_clock = m.work.flops_per_clock_per_sm;
  if (m.work.flops <= 0 || m.work.bytes <= 0 || per_clock <= 0 || mhz <= 0 || m.stats.median <= 0 ||
      dev.info.sms <= 0)
    return;
  const double compute = per_clock * dev.info.sms * mhz * 1e6;
  const double roof = std::min(compute, m.work.flops / m.work.bytes * dev.info.peak_bytes_per_s());
  m.rates["roof_flops_per_s"] = roof;
  m.rates["fraction_of_roof"] = m.work.flops / m.stats.median / roof;
}

void add_peak_fractions(measurement& m, const device_record& dev) {
  const auto bps = m.rates.find("bytes_per_s");
  if (bps == m.rates.end()) return;
  m.rates["fraction_of_theoretical_peak"] = bps->get<double>() / dev.info.peak_bytes_per_s();
  if (dev.d2d_bytes_per_s)
    m.rates["fraction_of_measured_peak"] = bps->get<double>() / *dev.d2d_bytes_per_s;
}

std::string_view to_string(result_status s) noexcept {
  switch (s) {
  case result_status::ok: return "ok";
  case result_status::failed: return "failed";
  case result_status::skipped: return "skipped";
  case result_status::error: return "error";
  }
  return "?";
}

std::optional<result_status> parse_result_status(std::string_view s) noexcept {
  for (auto st :
       {result_status::ok, result_status::failed, result_status::skipped, result_status::error})
    if (to_string(st) == s) return st;
  return std::nullopt;
}

bool result::converged() const noexcept {
  return std::all_of(measurements.begin(), measurements.end(),
                     [](const measurement& m) { return m.converged; });
}

const measurement* result::find(std::string_view name) const noexcept {
  for (const auto& m : measurements)
    if (m.name == name) return &m;
  return nullptr;
}

static json measurement_fields(const measurement& m) {
  return json{{"name", m.name},
              {"clock", to_string(m.clock)},
              {"unit", "s"},
              {"cold", m.cold},
              {"converged", m.converged},
              {"stats",
               {{"count", m.stats.count},
                {"min", m.stats.min},
                {"median", m.stats.median},
                {"mean", m.stats.mean},
                {"max", m.stats.max},
                {"stddev", m.stats.stddev},
                {"rel_stddev", m.stats.rel_stddev}}},
              {"samples", m.samples},
              {"bytes", m.work.bytes},
              {"items", m.work.items},
              {"item_unit", m.work.item_unit},
              {"rates", m.rates}};
}

json to_json(const measurement& m) {
  json j = measurement_fields(m);
  if (m.work.flops > 0) j["flops"] = m.work.flops;
  // Why sampling stopped, how GPU samples were timed, what the GPU was doing.
  if (m.stopped) j["stop_reason"] = std::string(to_string(*m.stopped));
  if (m.timing) j["timing"] = std::string(to_string(*m.timing));
  if (m.clock == clock_kind::gpu && m.l2_flush) j["l2_flush"] = std::string(to_string(*m.l2_flush));
  if (m.invalid_samples > 0) j["invalid_samples"] = m.invalid_samples;
  if (!m.stopping.empty()) j["stopping"] = m.stopping;
  if (!m.throttled.empty()) j["throttled_samples"] = m.throttled;
  if (!m.sm_clock.empty()) j["sm_clock"] = m.sm_clock;
  if (m.batch_launches > 0) {
    j["batch_launches"] = m.batch_launches;
    j["batch_launch_free"] = m.batch_launch_free;
  }
  if (!m.description.empty()) j["description"] = m.description;
  if (!m.telemetry.empty()) j["telemetry"] = m.telemetry;
  if (!m.energy.empty()) j["energy"] = m.energy;
  // The regression gate's host-bound GPU timings, judged apart by compare.
  if (m.clock == clock_kind::gpu && m.host_enqueue_s > 0) {
    j["host_bound"] = m.host_bound;
    j["host_enqueue_s"] = m.host_enqueue_s;
    if (m.launch_free_s > 0) j["launch_free_s"] = m.launch_free_s;
  }
  return j;
}

namespace {

json to_json(const device_record& d) {
  const auto& i = d.info;
  json j{{"id", i.id},
         {"name", i.name},
         {"cc", fmt::format("{}.{}", i.cc_major, i.cc_minor)},
         {"sms", i.sms},
         {"memory_bytes", i.memory_bytes},
         {"l2_bytes", i.l2_bytes},
         {"bus_width_bits", i.bus_width_bits},
         {"mem_clock_khz", i.mem_clock_khz},
         {"peak_bytes_per_s", i.peak_bytes_per_s()},
         {"pci_bus_id", i.pci_bus_id},
         {"async_engines", i.async_engines}};
  if (!i.uuid.empty()) j["uuid"] = i.uuid; // absent from files written before it was recorded
  json measured = json::object();
  if (d.d2d_bytes_per_s) measured["d2d_bytes_per_s"] = *d.d2d_bytes_per_s;
  if (d.h2d_bytes_per_s) measured["h2d_bytes_per_s"] = *d.h2d_bytes_per_s;
  if (d.d2h_bytes_per_s) measured["d2h_bytes_per_s"] = *d.d2h_bytes_per_s;
  j["measured"] = measured;
  return j;
}

json to_json(const verification& v) {
  return json{{"performed", v.performed},
              // null, not false, when no check ran: "passed: false" would read as a failure.
              {"passed", v.performed ? json(v.passed) : json(nullptr)},
              {"method", v.method},
              {"tolerance", v.tolerance},
              // JSON has no infinity: a NaN or infinite error is written as the largest double.
              {"max_abs_error", std::isfinite(v.max_abs_error)
                                    ? v.max_abs_error
                                    : std::numeric_limits<double>::max()},
              {"checked", v.checked},
              {"mismatches", v.mismatches},
              {"within_tolerance", v.within_tolerance_fraction()},
              {"details", v.details}};
}

json result_fields(const result& r) {
  json ms = json::array();
  for (const auto& m : r.measurements) ms.push_back(to_json(m));
  return json{{"benchmark", r.benchmark},
              {"device", r.device},
              {"status", std::string(to_string(r.status))},
              {"reason", r.reason},
              {"params", r.params},
              {"measurements", ms},
              {"derived", r.derived},
              {"verification", to_json(r.verify)},
              {"converged", r.converged()}};
}

json to_json(const result& r) {
  json out = result_fields(r);
  // Multi-GPU: present only in concurrent and MPI runs.
  if (r.rank >= 0) {
    out["rank"] = r.rank;
    out["host"] = r.host;
  }
  return out;
}

} // namespace

static json report_fields(const run_report& rep) {
  const auto& m = rep.meta;
  json devices = json::array();
  for (const auto& d : rep.devices) devices.push_back(to_json(d));
  json results = json::array();
  for (const auto& r : rep.results) results.push_back(to_json(r));
  json host{{"name", m.host.name}, {"cpu", m.host.cpu_model}, {"cores", m.host.cores}};
  if (m.host.cores_usable > 0) host["cores_usable"] = m.host.cores_usable; // absent in older files
  return json{{"schema", std::string(schema_id)},
              {"meta",
               {{"version", m.version},
                {"git", m.git},
                {"argv", m.argv},
                {"started_at", m.started_at},
                {"host", host},
                {"cuda", {{"driver", m.cuda_driver}, {"runtime", m.cuda_runtime}}},
                {"incomplete", m.incomplete},
                {"incomplete_reason", m.incomplete_reason}}},
              {"devices", devices},
              {"results", results}};
}

json to_json(const run_report& rep) {
  json j = report_fields(rep);
  // What identifies the code that measured: the git revision and the hash of its sources.
  if (!rep.meta.source_hash.empty())
    j["meta"]["build"] = {{"git", rep.meta.git}, {"source_sha256", rep.meta.source_hash}};
  // A run with the test-only slowdown knob says so.
  if (!rep.meta.test_slowdown.empty()) j["meta"]["test_slowdown"] = rep.meta.test_slowdown;
  // The NVIDIA driver's own version, where the machine has a driver (absent from older files).
  if (!rep.meta.nvidia_driver.empty()) j["meta"]["cuda"]["nvidia_driver"] = rep.meta.nvidia_driver;
  // --resume: present only in a resumed run.
  if (!rep.meta.resumed_at.empty())
    j["meta"]["resumed"] = {{"at", rep.meta.resumed_at}, {"kept_points", rep.meta.resumed_points}};
  // The measurement options the run used (absent from files of older versions).
  if (rep.meta.options.is_object()) j["meta"]["options"] = rep.meta.options;
  // Multi-GPU: present only in concurrent and MPI runs.
  if (!rep.ranks.is_null()) j["ranks"] = rep.ranks;
  if (!rep.aggregate.is_null()) j["aggregate"] = rep.aggregate;
  return j;
}

int exit_code_for(const run_report& r) {
  if (r.meta.incomplete && interrupt_requested()) return 128 + interrupt_signal(); // 130, 143, 129
  const auto any = [&](result_status s) {
    return std::any_of(r.results.begin(), r.results.end(),
                       [s](const result& x) { return x.status == s; });
  };
  if (r.meta.incomplete || any(result_status::error) || any(result_status::skipped))
    return exit_code::cuda;
  if (any(result_status::failed)) return exit_code::verification_failed;
  return exit_code::success;
}

} // namespace gpubench
