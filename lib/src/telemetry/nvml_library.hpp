#pragma once
// NVML as gpubench loads it (dlopen at run time, so that gpubench builds without nvml.h and runs
// where the library is missing): the few types, constants and functions used, declared from
// NVML's documented, stable C ABI (nvml.h of the CUDA Toolkit / the NVML API reference). Shared by
// the telemetry recorder (nvml_monitor.cpp) and the state reader (nvml_state.cpp); private to
// telemetry/.
#include "gpubench/cuda/library.hpp"

#include <fmt/format.h>

#include <string>
#include <type_traits>
#include <utility>

namespace gpubench::nvml {

using nvml_return = int; // nvmlReturn_t
using nvml_device = struct nvml_device_st*;
inline constexpr nvml_return nvml_success = 0;
inline constexpr nvml_return nvml_insufficient_size = 7;
inline constexpr int nvml_clock_sm = 1;
inline constexpr int nvml_clock_mem = 2;
inline constexpr int nvml_temperature_gpu = 0;
inline constexpr unsigned fi_power_instant = 186;
// Cumulative clock-event-reason durations in ns (NVML_FI_DEV_PERF_POLICY_POWER,
// _PERF_POLICY_SYNC_BOOST, _CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, _HW_THERM_SLOWDOWN,
// _HW_POWER_BRAKE_SLOWDOWN).
inline constexpr std::pair<const char*, unsigned> reason_fields[] = {
    {"sw_power_cap", 74}, {"sync_boost", 76},      {"sw_thermal", 251},
    {"hw_thermal", 252},  {"hw_power_brake", 253},
};

union nvml_value {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
};
struct nvml_field_value { // nvmlFieldValue_t
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_us;
  int value_type; // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ulonglong, 4 slonglong
  nvml_return status;
  nvml_value value;
};
struct nvml_process_info { // nvmlProcessInfo_t of the _v2/_v3 process queries
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

inline double as_double(const nvml_field_value& f) {
  switch (f.value_type) {
  case 0: return f.value.d;
  case 1: return f.value.ui;
  case 2: return static_cast<double>(f.value.ul);
  case 3: return static_cast<double>(f.value.ull);
  case 4: return static_cast<double>(f.value.sll);
  default: return 0;
  }
}

/// NVML's file: the one set_library_file() named (the user's GPUBENCH_NVML_LIBRARY), else the
/// driver's libnvidia-ml.so.1; opened once for the process, and never closed.
inline const cuda::runtime_library& nvml_runtime_library() {
  return cuda::open_library(
      cuda::library_candidates(cuda::library_id::nvml, {"libnvidia-ml.so.1"}));
}

/// The loaded library, initialized once for the process.
class nvml_library {
public:
  static nvml_library& get() {
    static nvml_library lib;
    return lib;
  }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] std::string message(nvml_return r) const {
    return error_string_ != nullptr ? error_string_(r) : fmt::format("NVML error {}", r);
  }

  nvml_return (*device_by_pci)(const char*, nvml_device*) = nullptr;
  nvml_return (*clock_info)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*event_reasons)(nvml_device, unsigned long long*) = nullptr;
  nvml_return (*field_values)(nvml_device, int, nvml_field_value*) = nullptr;
  nvml_return (*total_energy)(nvml_device, unsigned long long*) = nullptr;
  nvml_return (*compute_processes)(nvml_device, unsigned*, nvml_process_info*) = nullptr;

  nvml_library(const nvml_library&) = delete;
  nvml_library& operator=(const nvml_library&) = delete;
  nvml_library(nvml_library&&) = delete;
  nvml_library& operator=(nvml_library&&) = delete;

private:
  nvml_library() {
    const cuda::runtime_library& lib = nvml_runtime_library();
    if (!lib.loaded()) {
      error_ = fmt::format("cannot load {}", lib.tried());
      return;
    }
    const auto sym = [&](auto& fn, const char* name) {
      fn = lib.symbol<std::remove_reference_t<decltype(fn)>>(name);
      return fn != nullptr;
    };
    nvml_return (*init)() = nullptr;
    if (!sym(init, "nvmlInit_v2") || !sym(device_by_pci, "nvmlDeviceGetHandleByPciBusId_v2")) {
      error_ = "NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
      return;
    }
    sym(shutdown_, "nvmlShutdown");
    sym(error_string_, "nvmlErrorString");
    sym(clock_info, "nvmlDeviceGetClockInfo");
    sym(temperature, "nvmlDeviceGetTemperature");
    if (!sym(event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
      sym(event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    sym(field_values, "nvmlDeviceGetFieldValues");
    sym(total_energy, "nvmlDeviceGetTotalEnergyConsumption");
    if (!sym(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3"))
      sym(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (const nvml_return r = init(); r != nvml_success) {
      error_ = fmt::format("nvmlInit failed: {}", message(r));
      return;
    }
    initialized_ = true;
  }
  ~nvml_library() {
    if (initialized_ && shutdown_ != nullptr) shutdown_();
    // The library stays loaded: other static destructors may still run after this one.
  }

  bool initialized_ = false;
  std::string error_;
  nvml_return (*shutdown_)() = nullptr;
  const char* (*error_string_)(nvml_return) = nullptr;
};

/// The handle of the GPU at `pci_bus_id`, or why there is none.
struct device_handle {
  nvml_device dev = nullptr;
  std::string error; ///< set when dev is null
};
device_handle device_at(const std::string& pci_bus_id);

} // namespace gpubench::nvml
