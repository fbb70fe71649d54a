#pragma once
// A GPU's properties as the results record them: plain data, no CUDA type, so the result model,
// its files and `compare` need nothing else of cuda/ (device.hpp reads them from a device).
#include <cstddef>
#include <string>

namespace gpubench::cuda {

struct device_info {
  int id = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sms = 0;
  std::size_t memory_bytes = 0;
  int l2_bytes = 0;
  int bus_width_bits = 0;
  int mem_clock_khz = 0;
  int max_threads_per_sm = 0;
  int async_engines = 0;
  std::string pci_bus_id;
  /// "GPU-xxxxxxxx-..." as nvidia-smi prints it (device_uuid): what tells one GPU from another of
  /// the same model, across machines; "" in files written before it was recorded.
  std::string uuid;
  /// 2 x memory clock x bus width (double data rate), bytes/s.
  [[nodiscard]] double peak_bytes_per_s() const noexcept {
    return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0);
  }
};

} // namespace gpubench::cuda
