#pragma once
// Device properties read once, the denominators of "% of peak", and the L2 flush.
#include "gpubench/cuda/device_info.hpp"
#include "gpubench/cuda/memory.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpubench::cuda {

/// Reads the properties with cudaDeviceGetAttribute (CUDA 13 dropped the memory clock from
/// cudaDeviceProp).
device_info query_device(int device);

/// The device's highest SM clock in kHz (cudaDevAttrClockRate), 0 when it cannot be read: the
/// clock of a theoretical FLOP rate where NVML gave no reading.
int max_sm_clock_khz(int device) noexcept;

/// The device's UUID as nvidia-smi prints it ("GPU-xxxxxxxx-..."), "" when it cannot be read:
/// how a rank or a journal names its GPU across processes.
std::string device_uuid(int device) noexcept;

/// Driver and runtime versions as "major.minor" (driver "none" when absent).
std::string driver_version_string() noexcept;
std::string runtime_version_string() noexcept;

/// Empties L2 before a timed region (kernel in l2_flush.cu), on stream `s`, the launch checked.
class l2_flusher {
public:
  explicit l2_flusher(int l2_bytes);
  /// Reads a buffer twice the L2's size: the next region starts with a cold cache and no dirty
  /// lines to write back (gpubench's default, --l2-flush read).
  void flush_by_reading(cudaStream_t s);
  /// Writes zeros over an L2-sized buffer, as nvbench does (--l2-flush write): the cache is left
  /// full of dirty lines, whose write-back the next region pays for.
  void flush_by_writing(cudaStream_t s);

private:
  device_buffer<std::byte> buffer_;
  std::size_t l2_bytes_;
};

} // namespace gpubench::cuda
