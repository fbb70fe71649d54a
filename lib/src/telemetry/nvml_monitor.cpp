// The telemetry recorder's NVML monitor, and the driver's version (nvml_library.hpp loads NVML).
#include "gpubench/telemetry/telemetry.hpp"

#include "nvml_library.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>

namespace gpubench {
namespace {

using namespace nvml; // NOLINT(google-build-using-namespace): the loader's own names

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

nvml::device_handle nvml::device_at(const std::string& pci_bus_id) {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  auto& lib = nvml_library::get();
  if (!lib.error().empty()) return {nullptr, lib.error()};
  nvml_device dev = nullptr;
  if (const nvml_return r = lib.device_by_pci(pci_bus_id.c_str(), &dev); r != nvml_success)
    return {nullptr, fmt::format("NVML has no device at PCI {}: {}", pci_bus_id, lib.message(r))};
  return {dev, {}};
}

std::unique_ptr<telemetry_source> open_telemetry(const std::string& pci_bus_id) {
  const auto handle = nvml::device_at(pci_bus_id);
  if (handle.dev == nullptr) return std::make_unique<unavailable_telemetry>(handle.error);
  return std::make_unique<telemetry_recorder>(
      std::make_unique<nvml_monitor>(nvml::nvml_library::get(), handle.dev));
}

} // namespace gpubench
