// NVML, loaded at run time with dlopen so that gpubench builds without nvml.h and runs where the
// library is missing. The few types and functions used are declared here from NVML's documented,
// stable C ABI (nvml.h of the CUDA Toolkit / the NVML API reference).
#include "gpubench/telemetry/telemetry.hpp"

#include "gpubench/cuda/library.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>

namespace gpubench {
namespace {

using nvml_return = int; // nvmlReturn_t
using nvml_device = struct nvml_device_st*;
constexpr nvml_return nvml_success = 0;
constexpr nvml_return nvml_insufficient_size = 7;
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;
constexpr int nvml_temperature_gpu = 0;
constexpr unsigned fi_power_instant = 186;
// Cumulative clock-event-reason durations in ns (NVML_FI_DEV_PERF_POLICY_POWER,
// _PERF_POLICY_SYNC_BOOST, _CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, _HW_THERM_SLOWDOWN,
// _HW_POWER_BRAKE_SLOWDOWN).
constexpr std::pair<const char*, unsigned> reason_fields[] = {
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

double as_double(const nvml_field_value& f) {
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
const cuda::runtime_library& nvml_runtime_library() {
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

class nvml_monitor final : public gpu_monitor {
public:
  nvml_monitor(nvml_library& lib, nvml_device dev) : lib_(lib), dev_(dev) {}

  gpu_reading read() override {
    gpu_reading r;
    unsigned v = 0;
    if (lib_.clock_info != nullptr && lib_.clock_info(dev_, nvml_clock_sm, &v) == nvml_success)
      r.sm_clock_mhz = v;
    if (lib_.clock_info != nullptr && lib_.clock_info(dev_, nvml_clock_mem, &v) == nvml_success)
      r.mem_clock_mhz = v;
    if (lib_.temperature != nullptr &&
        lib_.temperature(dev_, nvml_temperature_gpu, &v) == nvml_success)
      r.temperature_c = v;
    unsigned long long reasons = 0;
    if (lib_.event_reasons != nullptr && lib_.event_reasons(dev_, &reasons) == nvml_success)
      r.event_reasons = reasons;
    return r;
  }

  std::map<std::string, std::uint64_t> throttle_ns() override {
    std::map<std::string, std::uint64_t> out;
    if (lib_.field_values == nullptr) return out;
    constexpr int n = static_cast<int>(std::size(reason_fields));
    nvml_field_value f[n] = {};
    for (int i = 0; i < n; ++i) f[i].field_id = reason_fields[i].second;
    if (lib_.field_values(dev_, n, f) != nvml_success) return out;
    for (int i = 0; i < n; ++i)
      if (f[i].status == nvml_success)
        out[reason_fields[i].first] = static_cast<std::uint64_t>(as_double(f[i]));
    return out;
  }

  monitored<std::vector<unsigned>> compute_pids() override {
    if (lib_.compute_processes == nullptr) return {{}, "no nvmlDeviceGetComputeRunningProcesses"};
    std::vector<nvml_process_info> infos(16);
    for (int attempt = 0; attempt < 4; ++attempt) {
      auto count = static_cast<unsigned>(infos.size());
      const nvml_return r = lib_.compute_processes(dev_, &count, infos.data());
      if (r == nvml_success) {
        std::vector<unsigned> pids;
        for (unsigned i = 0; i < count && i < infos.size(); ++i) pids.push_back(infos[i].pid);
        return {pids, {}};
      }
      if (r != nvml_insufficient_size) return {{}, lib_.message(r)};
      infos.resize(std::max<std::size_t>(count, infos.size()) * 2);
    }
    return {{}, "the process list kept growing"};
  }

  monitored<std::uint64_t> energy_mj() override {
    if (lib_.total_energy == nullptr) return {{}, "no nvmlDeviceGetTotalEnergyConsumption"};
    unsigned long long mj = 0;
    const nvml_return r = lib_.total_energy(dev_, &mj);
    if (r != nvml_success) return {{}, lib_.message(r)};
    return {mj, {}};
  }

  monitored<double> instant_power_w() override {
    if (lib_.field_values == nullptr) return {{}, "no nvmlDeviceGetFieldValues"};
    nvml_field_value f{};
    f.field_id = fi_power_instant;
    nvml_return r = lib_.field_values(dev_, 1, &f);
    if (r == nvml_success) r = f.status;
    if (r != nvml_success) return {{}, lib_.message(r)};
    return {as_double(f) * 1e-3, {}}; // milliwatts
  }

private:
  nvml_library& lib_;
  nvml_device dev_;
};

} // namespace

std::optional<std::string> nvml_driver_version(std::string& why) {
  // Initialized and shut down here (NVML's init is reference-counted): the telemetry's own use
  // stays untouched until a measurement asks for it.
  const cuda::runtime_library& lib = nvml_runtime_library();
  if (!lib.loaded()) {
    why = fmt::format("cannot load {}", lib.tried());
    return std::nullopt;
  }
  using init_fn = nvml_return (*)();
  using version_fn = nvml_return (*)(char*, unsigned);
  const auto init = lib.symbol<init_fn>("nvmlInit_v2");
  const auto version = lib.symbol<version_fn>("nvmlSystemGetDriverVersion");
  const auto shutdown = lib.symbol<init_fn>("nvmlShutdown");
  if (init == nullptr || version == nullptr || shutdown == nullptr) {
    why = "NVML lacks nvmlInit_v2, nvmlSystemGetDriverVersion or nvmlShutdown";
    return std::nullopt;
  }
  if (const nvml_return rc = init(); rc != nvml_success) {
    why = fmt::format("nvmlInit failed (NVML error {})", rc);
    return std::nullopt;
  }
  std::array<char, 96> text{};
  const nvml_return rc = version(text.data(), static_cast<unsigned>(text.size()));
  (void)shutdown();
  if (rc != nvml_success) {
    why = fmt::format("nvmlSystemGetDriverVersion failed (NVML error {})", rc);
    return std::nullopt;
  }
  return std::string(text.data());
}

std::string nvidia_driver_version(const std::string& version_file) {
  // The kernel module's version line ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06
  // ..."): no library to load, and present wherever the driver is, containers included.
  std::ifstream f(version_file.empty() ? "/proc/driver/nvidia/version" : version_file);
  std::string line;
  if (f && std::getline(f, line)) {
    static const std::regex module_version(
        R"(Kernel Module\s+(?:for \S+\s+)?([0-9]+(?:\.[0-9]+)+))");
    std::smatch m;
    if (std::regex_search(line, m, module_version)) return m[1].str();
  }
  if (!version_file.empty()) return {}; // a named file is the only source asked
  std::string why;
  return nvml_driver_version(why).value_or(std::string());
}

std::unique_ptr<telemetry_source> open_telemetry(const std::string& pci_bus_id) {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  auto& lib = nvml_library::get();
  if (!lib.error().empty()) return std::make_unique<unavailable_telemetry>(lib.error());
  nvml_device dev = nullptr;
  if (const nvml_return r = lib.device_by_pci(pci_bus_id.c_str(), &dev); r != nvml_success)
    return std::make_unique<unavailable_telemetry>(
        fmt::format("NVML has no device at PCI {}: {}", pci_bus_id, lib.message(r)));
  return std::make_unique<telemetry_recorder>(std::make_unique<nvml_monitor>(lib, dev));
}

} // namespace gpubench
