// read_gpu_state(): one NVML query per field, each allowed to fail on its own (a GPU without ECC,
// a driver without remapped rows, a container that hides the power limit).
#include "gpubench/telemetry/gpu_state.hpp"

#include "nvml_library.hpp"

namespace gpubench {
namespace {

using nvml::nvml_device;
using nvml::nvml_return;
using nvml::nvml_success;

/// Calls NVML's `name` with `dev` and `args`, or says why it could not: not exported by this
/// driver, or NVML's error text.
template <typename... Args>
std::string call(const char* name, nvml_device dev, Args*... args) {
  using fn = nvml_return (*)(nvml_device, Args * ...);
  const auto f = nvml::nvml_runtime_library().symbol<fn>(name);
  if (f == nullptr) return fmt::format("this driver's NVML has no {}", name);
  if (const nvml_return r = f(dev, args...); r != nvml_success)
    return fmt::format("{}: {}", name, nvml::nvml_library::get().message(r));
  return {};
}

template <typename T, typename... Args>
monitored<T> one(const char* name, nvml_device dev, Args... leading) {
  // For queries of the form f(dev, enum..., T*): the leading enums are passed by value.
  using fn = nvml_return (*)(nvml_device, Args..., T*);
  const auto f = nvml::nvml_runtime_library().symbol<fn>(name);
  if (f == nullptr) return {{}, fmt::format("this driver's NVML has no {}", name)};
  T v{};
  if (const nvml_return r = f(dev, leading..., &v); r != nvml_success)
    return {{}, fmt::format("{}: {}", name, nvml::nvml_library::get().message(r))};
  return {v, {}};
}

monitored<pcie_link> link(nvml_device dev, const char* gen_fn, const char* width_fn) {
  const auto gen = one<unsigned>(gen_fn, dev);
  const auto width = one<unsigned>(width_fn, dev);
  if (!gen.value) return {{}, gen.error};
  if (!width.value) return {{}, width.error};
  return {pcie_link{*gen.value, *width.value}, {}};
}

monitored<double> watts(const monitored<unsigned>& mw) {
  if (!mw.value) return {{}, mw.error};
  return {*mw.value * 1e-3, {}};
}

monitored<bool> enabled(const monitored<int>& state) {
  if (!state.value) return {{}, state.error};
  return {*state.value != 0, {}};
}

constexpr int clock_sm = 1;
constexpr int clock_mem = 2;
constexpr int ecc_corrected = 0;
constexpr int ecc_uncorrected = 1;
constexpr int ecc_volatile = 0;
constexpr int temperature_gpu = 0;
constexpr int threshold_slowdown = 1;

template <typename T>
nlohmann::json field(const monitored<T>& m) {
  if (!m.value) return {{"error", m.error}};
  return *m.value;
}

} // namespace

gpu_state read_gpu_state(const std::string& pci_bus_id) {
  gpu_state s;
  const auto handle = nvml::device_at(pci_bus_id);
  if (handle.dev == nullptr) {
    s.unavailable = handle.error;
    return s;
  }
  nvml_device dev = handle.dev;
  s.link_now = link(dev, "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth");
  s.link_max = link(dev, "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkWidth");
  s.gpu_max_link_generation = one<unsigned>("nvmlDeviceGetGpuMaxPcieLinkGeneration", dev);
  s.sm_clock_max_mhz = one<unsigned>("nvmlDeviceGetMaxClockInfo", dev, clock_sm);
  s.mem_clock_max_mhz = one<unsigned>("nvmlDeviceGetMaxClockInfo", dev, clock_mem);
  {
    int current = 0;
    int pending = 0;
    if (auto why = call("nvmlDeviceGetEccMode", dev, &current, &pending); why.empty())
      s.ecc_enabled = {current != 0, {}};
    else
      s.ecc_enabled = {{}, std::move(why)};
  }
  s.ecc_uncorrected_volatile =
      one<std::uint64_t>("nvmlDeviceGetTotalEccErrors", dev, ecc_uncorrected, ecc_volatile);
  s.ecc_corrected_volatile =
      one<std::uint64_t>("nvmlDeviceGetTotalEccErrors", dev, ecc_corrected, ecc_volatile);
  {
    unsigned corr = 0;
    unsigned unc = 0;
    unsigned pending = 0;
    unsigned failed = 0;
    if (auto why = call("nvmlDeviceGetRemappedRows", dev, &corr, &unc, &pending, &failed);
        why.empty())
      s.remapped = {remapped_rows{corr, unc, pending != 0, failed != 0}, {}};
    else
      s.remapped = {{}, std::move(why)};
  }
  s.power_limit_w = watts(one<unsigned>("nvmlDeviceGetEnforcedPowerLimit", dev));
  s.power_default_limit_w = watts(one<unsigned>("nvmlDeviceGetPowerManagementDefaultLimit", dev));
  s.persistence = enabled(one<int>("nvmlDeviceGetPersistenceMode", dev));
  {
    unsigned current = 0;
    unsigned pending = 0;
    if (auto why = call("nvmlDeviceGetMigMode", dev, &current, &pending); why.empty())
      s.mig = {current != 0, {}};
    else
      s.mig = {{}, std::move(why)};
  }
  s.temperature_c = one<unsigned>("nvmlDeviceGetTemperature", dev, temperature_gpu);
  s.slowdown_temperature_c =
      one<unsigned>("nvmlDeviceGetTemperatureThreshold", dev, threshold_slowdown);
  return s;
}

nlohmann::json to_json(const gpu_state& s) {
  if (!s.unavailable.empty()) return {{"unavailable", s.unavailable}};
  const auto link_json = [](const monitored<pcie_link>& l) -> nlohmann::json {
    if (!l.value) return {{"error", l.error}};
    return {{"generation", l.value->generation}, {"width", l.value->width}};
  };
  nlohmann::json remapped;
  if (s.remapped.value)
    remapped = {{"correctable", s.remapped.value->correctable},
                {"uncorrectable", s.remapped.value->uncorrectable},
                {"pending", s.remapped.value->pending},
                {"failed", s.remapped.value->failed}};
  else
    remapped = {{"error", s.remapped.error}};
  return {{"pcie_link_now", link_json(s.link_now)},
          {"pcie_link_max", link_json(s.link_max)},
          {"gpu_max_pcie_generation", field(s.gpu_max_link_generation)},
          {"sm_clock_max_mhz", field(s.sm_clock_max_mhz)},
          {"mem_clock_max_mhz", field(s.mem_clock_max_mhz)},
          {"ecc_enabled", field(s.ecc_enabled)},
          {"ecc_uncorrected_volatile", field(s.ecc_uncorrected_volatile)},
          {"ecc_corrected_volatile", field(s.ecc_corrected_volatile)},
          {"remapped_rows", remapped},
          {"power_limit_w", field(s.power_limit_w)},
          {"power_default_limit_w", field(s.power_default_limit_w)},
          {"persistence_mode", field(s.persistence)},
          {"mig_mode", field(s.mig)},
          {"temperature_c", field(s.temperature_c)},
          {"slowdown_temperature_c", field(s.slowdown_temperature_c)}};
}

} // namespace gpubench
