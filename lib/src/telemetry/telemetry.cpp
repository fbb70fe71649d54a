#include "gpubench/telemetry/telemetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

namespace gpubench {

using nlohmann::json;

const std::vector<throttle_reason>& throttle_reasons() {
  // NVML's nvmlClocksEventReason* bits. Power capping is normal TDP behaviour: informational.
  static const std::vector<throttle_reason> reasons{
      {"sw_power_cap", 0x4, "power_cap"}, {"hw_slowdown", 0x8, "hw_slowdown"},
      {"sync_boost", 0x10, ""},           {"sw_thermal", 0x20, "thermal"},
      {"hw_thermal", 0x40, "thermal"},    {"hw_power_brake", 0x80, "hw_slowdown"},
  };
  return reasons;
}

json unavailable_telemetry::stop() { return json{{"available", false}, {"reason", reason_}}; }

namespace {

json min_median(std::vector<unsigned> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return json{{"min", v.front()}, {"median", median}};
}

/// A reading stamped with the middle of the time it took.
gpu_reading stamped_read(gpu_monitor& monitor) {
  const auto before = std::chrono::steady_clock::now();
  auto r = monitor.read();
  r.at = before + (std::chrono::steady_clock::now() - before) / 2;
  return r;
}

} // namespace

json summarize_telemetry(const telemetry_observation& o) {
  std::vector<unsigned> sm;
  std::vector<unsigned> mem;
  std::optional<unsigned> max_temp;
  std::map<std::string, int> seen;
  int with_reasons = 0;
  for (const auto& r : o.readings) {
    if (r.sm_clock_mhz) sm.push_back(*r.sm_clock_mhz);
    if (r.mem_clock_mhz) mem.push_back(*r.mem_clock_mhz);
    if (r.temperature_c) max_temp = std::max(max_temp.value_or(0), *r.temperature_c);
    if (r.event_reasons) {
      ++with_reasons;
      for (const auto& t : throttle_reasons())
        if ((*r.event_reasons & t.bit) != 0) ++seen[t.name];
    }
  }
  json j{{"available", true}, {"duration_s", o.duration_s}, {"readings", o.readings.size()}};
  // A figure that could not be read is left out, never written as null or 0 (agreed.md: readers
  // take the agreed fields as numbers where present).
  if (!sm.empty()) j["sm_clock_mhz"] = min_median(sm);
  if (!mem.empty()) j["mem_clock_mhz"] = min_median(mem);
  if (max_temp) j["temperature_c"] = json{{"max", *max_temp}};

  // The share of the measurement in each reason: from the driver's cumulative counters where it
  // keeps one (exact, no polling), else from the share of readings that showed the reason.
  json throttle = json::object();
  json source = json::object();
  std::set<std::string> flags;
  for (const auto& t : throttle_reasons()) {
    double fraction = 0;
    const auto b = o.throttle_ns_before.find(t.name);
    const auto a = o.throttle_ns_after.find(t.name);
    if (b != o.throttle_ns_before.end() && a != o.throttle_ns_after.end() && o.duration_s > 0) {
      const double ns = a->second >= b->second ? static_cast<double>(a->second - b->second) : 0.0;
      fraction = std::clamp(ns * 1e-9 / o.duration_s, 0.0, 1.0);
      source[t.name] = "counter";
    } else if (with_reasons > 0) {
      fraction = static_cast<double>(seen[t.name]) / with_reasons;
      source[t.name] = "readings";
    } else {
      continue;
    }
    throttle[t.name] = fraction;
    if (*t.flag != '\0' && (fraction >= flag_fraction || seen[t.name] > 0)) flags.insert(t.flag);
  }
  j["throttle"] = throttle;
  j["throttle_source"] = source;

  if (o.pids_error.empty()) {
    std::set<unsigned> others(o.pids_seen.begin(), o.pids_seen.end());
    others.erase(o.own_pid);
    j["other_processes"] = others.size();
    if (!others.empty()) flags.insert("contention");
  } else {
    j["other_processes_error"] = o.pids_error;
  }
  j["flags"] = json(std::vector<std::string>(flags.begin(), flags.end()));
  return j;
}

struct telemetry_recorder::state {
  std::mutex mutex;
  std::condition_variable wake;
  bool running = false;
  std::thread thread;
  std::chrono::steady_clock::time_point started;
  telemetry_observation obs;
};

telemetry_recorder::telemetry_recorder(std::unique_ptr<gpu_monitor> monitor,
                                       std::chrono::milliseconds period)
    : monitor_(std::move(monitor)), period_(period), state_(std::make_unique<state>()) {}

telemetry_recorder::~telemetry_recorder() {
  // A destructor must not throw: a failure to read the final counters is dropped here (stop()
  // reports it when called directly).
  try {
    if (state_->thread.joinable()) (void)stop();
  } catch (...) {
  }
}

void telemetry_recorder::start() {
  if (state_->thread.joinable()) (void)stop();
  auto& s = *state_;
  s.obs = {};
  s.obs.own_pid = static_cast<unsigned>(::getpid());
  s.obs.throttle_ns_before = monitor_->throttle_ns();
  const auto pids = monitor_->compute_pids();
  if (pids.value)
    s.obs.pids_seen = *pids.value;
  else
    s.obs.pids_error = pids.error;
  s.started = std::chrono::steady_clock::now();
  s.running = true;
  // Readings start one period in: the GPU may still be idle at the very start.
  s.thread = std::thread([this] {
    auto& st = *state_;
    std::unique_lock lock(st.mutex);
    auto next_pids = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
    while (!st.wake.wait_for(lock, period_, [&] { return !st.running; })) {
      lock.unlock();
      const auto r = stamped_read(*monitor_);
      // The process list costs milliseconds to read: four times a second is enough to see a
      // neighbour that stays longer than a blip.
      std::optional<std::vector<unsigned>> seen;
      if (std::chrono::steady_clock::now() >= next_pids) {
        seen = monitor_->compute_pids().value;
        next_pids = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
      }
      lock.lock();
      st.obs.readings.push_back(r);
      if (seen) st.obs.pids_seen.insert(st.obs.pids_seen.end(), seen->begin(), seen->end());
    }
  });
}

std::vector<gpu_reading> telemetry_recorder::readings() const {
  if (state_->thread.joinable()) return {}; // still recording
  return state_->obs.readings;
}

json telemetry_recorder::stop() {
  auto& s = *state_;
  if (!s.thread.joinable()) return json{{"available", false}, {"reason", "not started"}};
  {
    const std::lock_guard lock(s.mutex);
    s.running = false;
  }
  s.wake.notify_all();
  s.thread.join();
  // One reading right after the last sample, so that short measurements have one too.
  s.obs.readings.push_back(stamped_read(*monitor_));
  s.obs.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
  s.obs.throttle_ns_after = monitor_->throttle_ns();
  const auto pids = monitor_->compute_pids();
  if (pids.value)
    s.obs.pids_seen.insert(s.obs.pids_seen.end(), pids.value->begin(), pids.value->end());
  return summarize_telemetry(s.obs);
}

std::string telemetry_line(const json& t) {
  if (!t.is_object() || t.empty()) return {};
  if (!t.value("available", false))
    return fmt::format("telemetry: unavailable ({})", t.value("reason", std::string("unknown")));
  std::string out = "telemetry:";
  const auto clock = [&](const char* key, const char* label) {
    if (const auto it = t.find(key); it != t.end() && it->is_object())
      out += fmt::format(" {} {:.0f}/{:.0f} MHz (min/median),", label, it->value("min", 0.0),
                         it->value("median", 0.0));
  };
  clock("sm_clock_mhz", "SM");
  clock("mem_clock_mhz", "mem");
  if (const auto it = t.find("temperature_c"); it != t.end() && it->is_object())
    out += fmt::format(" max {:.0f} C,", it->value("max", 0.0));
  std::string throttled;
  if (const auto it = t.find("throttle"); it != t.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_number() && v.get<double>() > 0)
        throttled +=
            fmt::format("{}{} {:.1f}%", throttled.empty() ? "" : ", ", k, v.get<double>() * 100);
  out += fmt::format(" throttle: {},", throttled.empty() ? "none" : throttled);
  if (const auto it = t.find("other_processes"); it != t.end() && it->is_number())
    out += fmt::format(" other processes: {}", it->get<int>());
  else
    out += " other processes: unknown";
  if (const auto it = t.find("flags"); it != t.end() && it->is_array() && !it->empty()) {
    std::string f;
    for (const auto& x : *it) f += (f.empty() ? "" : ",") + x.get<std::string>();
    out += fmt::format(" [flags: {}]", f);
  }
  return out;
}

bool telemetry_flagged(const json& t) {
  if (!t.is_object()) return false;
  const auto it = t.find("flags");
  if (it == t.end() || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [](const json& f) {
    return f.is_string() && (f == "thermal" || f == "hw_slowdown" || f == "contention");
  });
}

} // namespace gpubench
