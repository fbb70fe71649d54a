#pragma once
// The state of a GPU that `gpubench check` judges (docs/check.md): PCIe link, clock limits, ECC
// errors and remapped rows, power limit, persistence and MIG mode, temperature and its limits,
// read from NVML. Every field says what it holds or why NVML could not answer it.
#include "gpubench/telemetry/telemetry.hpp"

#include <cstdint>
#include <string>

namespace gpubench {

struct pcie_link {
  unsigned generation = 0;
  unsigned width = 0;
};

struct remapped_rows {
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  bool pending = false; ///< a remap waits for the GPU's next reset
  bool failed = false;  ///< a remap could not be made
};

struct gpu_state {
  /// Why nothing could be read ("" when NVML answered for this GPU).
  std::string unavailable;
  monitored<pcie_link> link_now;               ///< the link as trained now
  monitored<pcie_link> link_max;               ///< the most this GPU and its slot support together
  monitored<unsigned> gpu_max_link_generation; ///< the most the GPU itself supports
  monitored<unsigned> sm_clock_max_mhz;
  monitored<unsigned> mem_clock_max_mhz;
  monitored<bool> ecc_enabled;
  monitored<std::uint64_t> ecc_uncorrected_volatile; ///< since the driver last loaded
  monitored<std::uint64_t> ecc_corrected_volatile;
  monitored<remapped_rows> remapped;
  monitored<double> power_limit_w;         ///< the limit in force
  monitored<double> power_default_limit_w; ///< the board's default
  monitored<bool> persistence;
  monitored<bool> mig;
  monitored<unsigned> temperature_c;
  monitored<unsigned> slowdown_temperature_c; ///< where the GPU starts to slow itself down
};

/// Reads the state of the GPU at `pci_bus_id` (one call, no thread). Never throws.
gpu_state read_gpu_state(const std::string& pci_bus_id);

/// The state as JSON (docs/json-schema.md, check results): each field its value, or
/// {"error": why}.
nlohmann::json to_json(const gpu_state& s);

} // namespace gpubench
