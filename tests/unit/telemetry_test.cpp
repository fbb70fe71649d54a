// The telemetry engine against a fake NVML: a gpu_monitor whose clocks, throttle counters and
// process list the test scripts, so every flag can be produced on a machine without a GPU.
#include "gpubench/telemetry/telemetry.hpp"

#include "gpubench/engine/environment.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include <unistd.h>

using namespace gpubench;
using nlohmann::json;

namespace {

/// A GPU as NVML would describe it, advanced by the test.
class fake_nvml final : public gpu_monitor {
public:
  struct state {
    unsigned sm = 1980;
    unsigned mem = 2619;
    unsigned temp = 45;
    std::uint64_t reasons = 0;
    std::map<std::string, std::uint64_t> throttle_ns;
    std::vector<unsigned> pids;
    std::string pids_error;
  };
  explicit fake_nvml(state s) : s_(std::move(s)) {}
  void set(const std::function<void(state&)>& f) {
    const std::lock_guard lock(mutex_);
    f(s_);
  }
  gpu_reading read() override {
    const std::lock_guard lock(mutex_);
    return {s_.sm, s_.mem, s_.temp, s_.reasons};
  }
  std::map<std::string, std::uint64_t> throttle_ns() override {
    const std::lock_guard lock(mutex_);
    return s_.throttle_ns;
  }
  monitored<std::vector<unsigned>> compute_pids() override {
    const std::lock_guard lock(mutex_);
    if (!s_.pids_error.empty()) return {{}, s_.pids_error};
    return {s_.pids, {}};
  }
  monitored<std::uint64_t> energy_mj() override { return {{}, "fake: no counter"}; }
  monitored<double> instant_power_w() override { return {{}, "fake: no power"}; }

private:
  std::mutex mutex_;
  state s_;
};

const auto own = static_cast<unsigned>(::getpid());

std::vector<std::string> flags_of(const json& t) {
  return t.at("flags").get<std::vector<std::string>>();
}

} // namespace

TEST_CASE("telemetry: an idle-free, unthrottled, unshared GPU has no flags", "[telemetry]") {
  telemetry_observation o;
  o.duration_s = 1.0;
  o.own_pid = own;
  o.pids_seen = {own};
  for (unsigned sm : {1980U, 1965U, 1980U}) o.readings.push_back({sm, 2619U, 50U, 0U});
  o.throttle_ns_before = {{"sw_power_cap", 0}, {"sw_thermal", 5}};
  o.throttle_ns_after = {{"sw_power_cap", 0}, {"sw_thermal", 5}};
  const auto t = summarize_telemetry(o);
  CHECK(t["available"] == true);
  CHECK(t["sm_clock_mhz"]["min"] == 1965);
  CHECK(t["sm_clock_mhz"]["median"] == 1980.0);
  CHECK(t["mem_clock_mhz"]["median"] == 2619.0);
  CHECK(t["temperature_c"]["max"] == 50);
  CHECK(t["other_processes"] == 0);
  CHECK(t["throttle"]["sw_power_cap"] == 0.0);
  CHECK(t["throttle_source"]["sw_power_cap"] == "counter");
  CHECK(flags_of(t).empty());
  CHECK_FALSE(telemetry_flagged(t));
}

TEST_CASE("telemetry: the throttle share comes from the cumulative counters", "[telemetry]") {
  telemetry_observation o;
  o.duration_s = 2.0;
  o.own_pid = own;
  o.readings.push_back({1400U, 2619U, 70U, 0x4U});
  o.throttle_ns_before = {{"sw_power_cap", 1'000'000'000}, {"hw_thermal", 0}};
  // 1.5 s of the 2 s capped by power, 0.1 s of hardware thermal slowdown.
  o.throttle_ns_after = {{"sw_power_cap", 2'500'000'000}, {"hw_thermal", 100'000'000}};
  const auto t = summarize_telemetry(o);
  CHECK(t["throttle"]["sw_power_cap"].get<double>() == Approx(0.75));
  CHECK(t["throttle"]["hw_thermal"].get<double>() == Approx(0.05));
  // Power capping is normal TDP behaviour: annotated, not flagged. Thermal is flagged.
  CHECK(flags_of(t) == std::vector<std::string>{"power_cap", "thermal"});
  CHECK(telemetry_flagged(t));
}

TEST_CASE("telemetry: a reason below 1% of the measurement and never seen is not flagged",
          "[telemetry]") {
  telemetry_observation o;
  o.duration_s = 1.0;
  o.own_pid = own;
  o.readings.push_back({1980U, 2619U, 50U, 0U});
  o.throttle_ns_before = {{"hw_power_brake", 0}};
  o.throttle_ns_after = {{"hw_power_brake", 9'000'000}}; // 0.9%
  const auto t = summarize_telemetry(o);
  CHECK(t["throttle"]["hw_power_brake"].get<double>() == Approx(0.009));
  CHECK(flags_of(t).empty());
}

TEST_CASE("telemetry: without counters the share of readings is used", "[telemetry]") {
  telemetry_observation o;
  o.duration_s = 1.0;
  o.own_pid = own;
  o.readings = {{1980U, 2619U, 50U, 0U},
                {1700U, 2619U, 50U, 0x8U},
                {1980U, 2619U, 50U, 0U},
                {1980U, 2619U, 50U, 0U}};
  const auto t = summarize_telemetry(o);
  CHECK(t["throttle"]["hw_slowdown"].get<double>() == Approx(0.25));
  CHECK(t["throttle_source"]["hw_slowdown"] == "readings");
  CHECK(flags_of(t) == std::vector<std::string>{"hw_slowdown"});
}

TEST_CASE("telemetry: another process on the GPU is contention", "[telemetry]") {
  telemetry_observation o;
  o.duration_s = 1.0;
  o.own_pid = own;
  o.pids_seen = {own, own + 1, own + 1};
  const auto t = summarize_telemetry(o);
  CHECK(t["other_processes"] == 1);
  CHECK(flags_of(t) == std::vector<std::string>{"contention"});
  CHECK(telemetry_line(t).find("other processes: 1") != std::string::npos);
}

TEST_CASE("telemetry: an unreadable process list is unknown, not zero", "[telemetry]") {
  telemetry_observation o;
  o.duration_s = 1.0;
  o.own_pid = own;
  o.pids_error = "Insufficient Permissions";
  const auto t = summarize_telemetry(o);
  CHECK_FALSE(t.contains("other_processes"));
  CHECK(t["other_processes_error"] == "Insufficient Permissions");
  CHECK(telemetry_line(t).find("other processes: unknown") != std::string::npos);
}

TEST_CASE("telemetry: the recorder samples a fake NVML while a measurement runs", "[telemetry]") {
  fake_nvml::state s;
  s.pids = {own};
  s.throttle_ns = {{"sw_power_cap", 0}, {"hw_thermal", 0}};
  auto fake = std::make_unique<fake_nvml>(s);
  fake_nvml* nvml = fake.get();
  telemetry_recorder rec(std::move(fake), std::chrono::milliseconds(2));
  rec.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  // Half-way: a neighbour arrives and the GPU heats up and slows down for the rest.
  nvml->set([&](fake_nvml::state& st) {
    st.sm = 1500;
    st.temp = 88;
    st.pids = {own, 4242};
    st.throttle_ns["hw_thermal"] = 20'000'000;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto t = rec.stop();
  CHECK(t["available"] == true);
  CHECK(t["readings"].get<int>() >= 2);
  CHECK(t["sm_clock_mhz"]["min"] == 1500);
  CHECK(t["temperature_c"]["max"] == 88);
  CHECK(t["other_processes"] == 1);
  CHECK(t["throttle"]["hw_thermal"].get<double>() > 0.1);
  CHECK(flags_of(t) == std::vector<std::string>{"contention", "thermal"});
  // A second measurement starts afresh.
  nvml->set([](fake_nvml::state& st) { st.pids = {own}; });
  rec.start();
  const auto again = rec.stop();
  CHECK(again["other_processes"] == 0);
  CHECK(again["throttle"]["hw_thermal"] == 0.0);
}

TEST_CASE("telemetry: without NVML every measurement says unavailable and why", "[telemetry]") {
  // This machine has no NVIDIA driver; a library name that cannot exist stands in elsewhere.
  const environment_override no_nvml(
      [](environment& e) { e.nvml_library = "/nonexistent/libnvidia-ml.so.1"; });
  auto source = open_telemetry("00000000:01:00.0");
  CHECK(source->monitor() == nullptr);
  CHECK(source->unavailable_reason().find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
  source->start();
  const auto t = source->stop();
  CHECK(t["available"] == false);
  CHECK(telemetry_line(t).rfind("telemetry: unavailable (", 0) == 0);
  CHECK_FALSE(telemetry_flagged(t));
}
