#pragma once
// The GPU's own start and end timestamps of the kernels, copies and memsets a sample enqueued,
// from CUPTI's activity records (the source Nsight Systems reads). A cudaEvent pair also times
// the GPU starting the first kernel and retiring the last (about 2 us on an H200, whatever the
// kernel); the span from the first activity's start to the last one's end does not.
// CUPTI is loaded at run time (dlopen), like NVML and cuBLAS: a machine without it still runs
// everything else, and `--timestamps` then says why it has no rows.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpubench::cuda {

/// One activity the GPU ran: the API call that enqueued it (CUPTI's correlation id) and the GPU's
/// timestamps in ns.
struct gpu_activity {
  std::uint32_t correlation = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

/// Seconds from the earliest start to the latest end among the activities enqueued by API calls
/// with correlation ids in [first, last]; nullopt when none is there (or a timestamp is missing).
[[nodiscard]] std::optional<double> activity_span_s(std::span<const gpu_activity> activities,
                                                    std::uint32_t first, std::uint32_t last);

/// Loads CUPTI (once) without tracing anything; false with `why` set when it cannot be loaded
/// (`gpubench doctor` reports it).
[[nodiscard]] bool try_load_cupti(std::string& why) noexcept;

/// CUPTI activity tracing for one measurement: kernels, copies and memsets of the whole process.
/// One at a time per process (CUPTI takes one subscriber). Open it, then for each sample call
/// begin() before enqueuing the work, end() after, and span_s() once the GPU finished it.
class kernel_timestamps {
public:
  /// Loads CUPTI and starts tracing; nullptr with `why` set when that is not possible (no CUPTI
  /// library, built without its headers, another profiler already subscribed...).
  static std::unique_ptr<kernel_timestamps> open(std::string& why);
  kernel_timestamps(const kernel_timestamps&) = delete;
  kernel_timestamps& operator=(const kernel_timestamps&) = delete;
  kernel_timestamps(kernel_timestamps&&) = delete;
  kernel_timestamps& operator=(kernel_timestamps&&) = delete;
  ~kernel_timestamps(); ///< stops tracing

  /// From here to end(), the CUDA calls of every thread belong to the sample.
  void begin() noexcept;
  void end() noexcept;
  /// After the GPU finished the sample's work: flushes CUPTI's records and returns the sample's
  /// span in seconds, NaN when no activity of the sample was recorded (records dropped).
  double span_s();

private:
  kernel_timestamps() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace gpubench::cuda
