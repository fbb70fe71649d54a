#pragma once
// What the GPU was doing during a measurement: clocks, temperature, throttle reasons and the share
// of the measurement spent in each, and other processes on the GPU. The engine talks to a
// gpu_monitor (NVML in production, nvml_monitor.hpp; a fake in the tests) through a
// telemetry_source that the sampler starts and stops around each measurement.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

/// A value a monitor could read, or why it could not.
template <typename T>
struct monitored {
  std::optional<T> value;
  std::string error; ///< set when value is empty
};

/// One instantaneous reading of a GPU's state.
struct gpu_reading {
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<unsigned> temperature_c;
  std::optional<std::uint64_t> event_reasons; ///< NVML clock-event-reason bitmask
  /// When it was read (the middle of the read); a default value for readings never stamped.
  std::chrono::steady_clock::time_point at{};
};

/// Clock-event reasons gpubench reports, with their NVML bitmask bit.
struct throttle_reason {
  const char* name;
  std::uint64_t bit;
  const char* flag; ///< the telemetry flag it raises ("" for none)
};
const std::vector<throttle_reason>& throttle_reasons();

/// What the engine needs from NVML for one device. Each call may fail; none throws.
class gpu_monitor {
public:
  gpu_monitor() = default;
  gpu_monitor(const gpu_monitor&) = delete;
  gpu_monitor& operator=(const gpu_monitor&) = delete;
  gpu_monitor(gpu_monitor&&) = delete;
  gpu_monitor& operator=(gpu_monitor&&) = delete;
  virtual ~gpu_monitor() = default;
  virtual gpu_reading read() = 0;
  /// Cumulative nanoseconds spent in each throttle reason (throttle_reasons() names); the
  /// reasons the device does not count are absent.
  virtual std::map<std::string, std::uint64_t> throttle_ns() = 0;
  /// Process ids of the compute processes on the device (ourselves included).
  virtual monitored<std::vector<unsigned>> compute_pids() = 0;
  /// The cumulative energy counter in millijoules.
  virtual monitored<std::uint64_t> energy_mj() = 0;
  /// Instantaneous board power in watts (NVML_FI_DEV_POWER_INSTANT).
  virtual monitored<double> instant_power_w() = 0;
};

/// What a sampler starts before a measurement and stops after it.
class telemetry_source {
public:
  telemetry_source() = default;
  telemetry_source(const telemetry_source&) = delete;
  telemetry_source& operator=(const telemetry_source&) = delete;
  telemetry_source(telemetry_source&&) = delete;
  telemetry_source& operator=(telemetry_source&&) = delete;
  virtual ~telemetry_source() = default;
  virtual void start() = 0;
  /// The measurement's "telemetry" object (docs/json-schema.md).
  virtual nlohmann::json stop() = 0;
  /// The monitor behind it, or nullptr when telemetry is unavailable (energy.hpp uses it).
  virtual gpu_monitor* monitor() noexcept = 0;
  /// Why there is no telemetry ("" when there is).
  [[nodiscard]] virtual std::string unavailable_reason() const = 0;
  /// The readings between the last start() and stop(), in time order, each stamped; empty
  /// where the source keeps none (--reject-throttled matches them to samples).
  [[nodiscard]] virtual std::vector<gpu_reading> readings() const { return {}; }
};

/// Telemetry that is not there: every measurement says so and why.
class unavailable_telemetry final : public telemetry_source {
public:
  explicit unavailable_telemetry(std::string reason) : reason_(std::move(reason)) {}
  void start() override {}
  nlohmann::json stop() override;
  gpu_monitor* monitor() noexcept override { return nullptr; }
  [[nodiscard]] std::string unavailable_reason() const override { return reason_; }

private:
  std::string reason_;
};

/// Raw observations of one measurement; summarize_telemetry() turns them into the JSON object.
struct telemetry_observation {
  double duration_s = 0;
  std::vector<gpu_reading> readings;
  std::map<std::string, std::uint64_t> throttle_ns_before;
  std::map<std::string, std::uint64_t> throttle_ns_after;
  std::vector<unsigned> pids_seen; ///< every compute pid seen during the measurement
  std::string pids_error;          ///< why the process list could not be read ("" if it could)
  unsigned own_pid = 0;
};

/// A reason is flagged when it held the clocks for at least this share of the measurement, or was
/// seen in any reading.
inline constexpr double flag_fraction = 0.01;

nlohmann::json summarize_telemetry(const telemetry_observation& o);

/// Samples a monitor on a light thread (every `period`) while a measurement runs; reads the
/// cumulative throttle counters and the process list at start and stop.
class telemetry_recorder final : public telemetry_source {
public:
  explicit telemetry_recorder(std::unique_ptr<gpu_monitor> monitor,
                              std::chrono::milliseconds period = std::chrono::milliseconds(10));
  ~telemetry_recorder() override;
  void start() override;
  nlohmann::json stop() override;
  gpu_monitor* monitor() noexcept override { return monitor_.get(); }
  [[nodiscard]] std::string unavailable_reason() const override { return {}; }
  [[nodiscard]] std::vector<gpu_reading> readings() const override;

private:
  struct state;
  std::unique_ptr<gpu_monitor> monitor_;
  std::chrono::milliseconds period_;
  std::unique_ptr<state> state_;
};

/// Telemetry for a CUDA device identified by its PCI bus id: NVML loaded at run time, or an
/// unavailable_telemetry that says why (no libnvidia-ml.so.1, init failed, device not found).
std::unique_ptr<telemetry_source> open_telemetry(const std::string& pci_bus_id);

/// The NVIDIA driver's version ("580.65.06") from `version_file` (default, ""
/// /proc/driver/nvidia/version), else, for the default file only, from NVML
/// (nvml_driver_version()); empty where neither answers (no driver: CPU-only machines).
std::string nvidia_driver_version(const std::string& version_file = {});

/// The driver's version as NVML reports it (nvmlSystemGetDriverVersion), NVML initialized and
/// shut down for the call; nullopt with `why` when NVML cannot be loaded or answer.
std::optional<std::string> nvml_driver_version(std::string& why);

/// One-line text of a telemetry object for tables: clocks, temperature, throttling, processes.
std::string telemetry_line(const nlohmann::json& telemetry);
/// True when the object carries a flagged condition (thermal, hw_slowdown, contention).
bool telemetry_flagged(const nlohmann::json& telemetry);

} // namespace gpubench
