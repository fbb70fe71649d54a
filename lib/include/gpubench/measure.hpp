#pragma once
// The one measurement engine: warm-up, sampling until the stopping criterion, statistics and rates.
// A workload declares its work and hands a closure to time; everything else is written here once.
#include "gpubench/stats.hpp"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace gpubench {

namespace cuda {
class l2_flusher;
}

struct measure_options {
  int warmup = 1;          ///< discarded samples before sampling, within the timeout
  int min_samples = 10;    ///< at least this many samples ...
  int max_samples = 1000;  ///< ... and never more than this many
  double min_time = 0.1;   ///< seconds of sampled time before stopping on noise
  double max_noise = 0.01; ///< stop once stddev / mean is at most this (fraction)
  double timeout = 1.0;    ///< wall seconds per measurement, warm-up included
  bool warm = false;       ///< true: do not flush L2 between GPU samples
};

/// The work one sample does: bytes that must move and items processed.
struct work_counts {
  double bytes = 0;
  double items = 0;
  std::string item_unit = "elements";
};

enum class clock_kind { gpu, host };

struct measurement {
  std::string name;
  clock_kind clock = clock_kind::gpu;
  std::vector<double> samples; ///< seconds, in the order taken
  summary stats;
  work_counts work;
  bool converged = false;
  bool cold = true; ///< L2 flushed before every sample (GPU clock only)
  /// GPU clock: the host took at least half the GPU time to enqueue the timed work, so the GPU
  /// waited on the host (launch gaps inside the timed region) and the figure moves with host
  /// speed between processes. The gate judges such measurements apart (docs/compare.md).
  bool host_bound = false;
  double host_enqueue_s = 0; ///< GPU clock: median host time to enqueue one sample's work
  /// GPU clock: median of 3 samples timed with the body enqueued while the GPU was held busy, so
  /// without host gaps (0 when not taken: samples longer than launch_free_max_sample_s).
  double launch_free_s = 0;
  /// bytes_per_s and items_per_s from the median, plus what the driver adds (fractions of peak).
  nlohmann::json rates = nlohmann::json::object();

  [[nodiscard]] double median() const noexcept { return stats.median; }
};

/// Fills stats, converged flag and median-based rates from samples and work.
void finalize(measurement& m);

/// A GPU measurement is marked host_bound when the host's enqueue time is at least this
/// fraction of the GPU time (the host cannot keep ahead) ...
inline constexpr double host_bound_enqueue_fraction = 0.5;
/// ... or when its median is at least this multiple of its launch-free time (host gaps are a
/// quarter of the timed region).
inline constexpr double host_bound_gap_ratio = 1.25;
/// Samples longer than this skip the launch-free reference (launch gaps are negligible there).
inline constexpr double launch_free_max_sample_s = 0.02;

/// Times GPU regions with a pair of cudaEvents on the workload's stream; flushes L2 before every
/// sample unless the options say warm. Also times the host's enqueue of each sample (host_bound)
/// and applies the test-only GPUBENCH_TEST_SLOWDOWN delay (test_slowdown.hpp). The body enqueues
/// work on `stream` (and may fork to other streams as long as it joins back before returning).
class gpu_sampler {
public:
  gpu_sampler(cudaStream_t stream, cuda::l2_flusher* flusher);
  measurement run(std::string name, const measure_options& opts, work_counts work,
                  const std::function<void(cudaStream_t)>& body);

private:
  cudaStream_t stream_;
  cuda::l2_flusher* flusher_;
};

/// Times host regions with std::chrono::steady_clock.
measurement measure_host(std::string name, const measure_options& opts, work_counts work,
                         const std::function<void()>& body);

/// The sampling loop shared by both clocks: `sample()` returns one sample in seconds.
/// `opts.timeout` bounds warm-up and sampling together: warm-up ends early once it has used the
/// whole budget, and sampling then takes one sample and stops, not converged.
/// `stop_requested` (SIGINT by default) is checked before every sample, warm-up included: an
/// interruption ends the loop after the current sample, and one that comes before the first
/// sample leaves `samples` empty (the runner then drops the measurement; runner.cpp).
/// Exposed for tests of the stopping criterion.
struct sampling_outcome {
  std::vector<double> samples;
  bool converged = false;
};
sampling_outcome sample_until_stable(const measure_options& opts,
                                     const std::function<double()>& sample,
                                     const std::function<bool()>& stop_requested = {});

} // namespace gpubench
