#pragma once
// The SM clock as the GPU itself counts it around one sample: a probe kernel before the sample's
// timed work stamps %globaltimer (nanoseconds, the same on every SM) and clock64 (the cycles of
// the SM it ran on); one after stamps both again on the same SM. Cycles over nanoseconds is the
// SM's mean clock across the sample, free of the 10 ms polling of NVML (methodology.md,
// "The SM clock of each sample").
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

namespace gpubench::cuda {

/// What one SM counted between begin() and end(): clock64 cycles and %globaltimer nanoseconds.
struct sm_clock_stamp {
  std::uint64_t cycles = 0;
  std::uint64_t ns = 0;
};

/// Two probe kernels around a sample on one stream. begin() launches one block that records the
/// SM it ran on and its stamps; end() launches two blocks per SM, and the first of them that runs
/// on begin()'s SM records the closing stamps. Neither is inside the sample's event pair.
class sm_clock_probe {
public:
  sm_clock_probe();
  sm_clock_probe(const sm_clock_probe&) = delete;
  sm_clock_probe& operator=(const sm_clock_probe&) = delete;
  sm_clock_probe(sm_clock_probe&&) = delete;
  sm_clock_probe& operator=(sm_clock_probe&&) = delete;
  ~sm_clock_probe();

  void begin(cudaStream_t s);
  void end(cudaStream_t s);
  /// Once the stream has passed end(): the elapsed stamps, or nothing when no block of end() ran
  /// on begin()'s SM (or the timer did not advance).
  [[nodiscard]] std::optional<sm_clock_stamp> read() const noexcept;

private:
  int sms_ = 1;
  std::uint64_t* device_ = nullptr;        ///< begin()'s SM, its stamps and the election flag
  volatile std::uint64_t* host_ = nullptr; ///< the stamps end() publishes (mapped host memory)
  std::uint64_t* host_on_device_ = nullptr;
};

/// The update period of %globaltimer on the current device, in nanoseconds: the smallest step a
/// thread sees when it reads the timer until it has changed 64 times. Measured once per device.
std::uint64_t globaltimer_resolution_ns();

} // namespace gpubench::cuda
