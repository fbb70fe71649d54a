#pragma once
// The one measurement engine: warm-up, sampling until the stopping criterion, statistics and rates.
// A workload declares its work and hands a closure to time; everything else is written here once.
#include "gpubench/engine/stopping.hpp"
#include "gpubench/results/measurement.hpp"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

namespace cuda {
class l2_flusher;
}
class telemetry_source;

struct measure_options {
  int warmup = 1;          ///< discarded samples before sampling, within the timeout
  int min_samples = 10;    ///< at least this many samples ...
  int max_samples = 1000;  ///< ... and never more than this many
  double min_time = 0.1;   ///< seconds of sampled time before stopping on noise
  double max_noise = 0.01; ///< stop once stddev / mean is at most this (fraction)
  double timeout = 1.0;    ///< wall seconds per measurement, warm-up included
  bool warm = false;       ///< true: do not flush L2 between GPU samples (--l2-flush none)
  /// --l2-flush as given; unset: read, or none with --warm. validate() refuses --warm beside a
  /// mode other than none; effective_l2_flush() says which flush the samples get.
  std::optional<l2_flush_mode> l2_flush{};
  /// > 0: also time back-to-back launches between two events, about this many seconds a sample
  /// (gpu_sampler::run_batch), for kernels shorter than a launch.
  double batch_time = 0;
  /// Also time each sample by the GPU's own timestamps of its kernels, copies and memsets
  /// (CUPTI; gpu_sampler::run_timestamps), which leave out the GPU starting the first kernel and
  /// retiring the last.
  bool timestamps = false;
  /// --energy-window / --energy-windows (energy.hpp): each energy window lasts at least this many
  /// seconds (and 10 counter steps), and at least this many windows are measured.
  double energy_window = 1.0;
  int energy_windows = 5;
  /// --stopping: which rule ends sampling as converged (stopping.hpp), within the bounds above.
  stopping_rule stopping = stopping_rule::stable;
  double entropy_max_angle = default_entropy_max_angle; ///< degrees (--entropy-max-angle)
  double entropy_min_r2 = default_entropy_min_r2;       ///< --entropy-min-r2
  /// --reject-throttled: > 0 drops each GPU sample during which the SM clock fell below this
  /// fraction of the measurement's median SM clock (engine/throttled.hpp); 0: off.
  double reject_throttled = 0;
};

/// The stopping rule `opts.stopping` names, with its parameters from `opts`.
std::unique_ptr<stopping_criterion> make_stopping_criterion(const measure_options& opts);

/// The flush GPU samples get under `opts`: none with --warm, else --l2-flush (read by default).
l2_flush_mode effective_l2_flush(const measure_options& opts) noexcept;

/// A GPU measurement is marked host_bound when the host's enqueue time is at least this
/// fraction of the GPU time (the host cannot keep ahead) ...
inline constexpr double host_bound_enqueue_fraction = 0.5;
/// ... or when its median is at least this multiple of its launch-free time (host gaps are a
/// quarter of the timed region).
inline constexpr double host_bound_gap_ratio = 1.25;
/// Samples longer than this skip the launch-free reference (launch gaps are negligible there).
inline constexpr double launch_free_max_sample_s = 0.02;

/// What a GPU body does to the host while it is enqueued.
enum class body_kind {
  asynchronous,     ///< only enqueues: it can be timed behind a blocking kernel
  host_synchronous, ///< waits for the GPU while enqueuing (pageable copies...): it cannot
};

/// What measure_row() (phases.hpp) asks of a sampler: the three ways to time a row, its stream and
/// its telemetry. gpu_sampler is the one that times a GPU; the unit tests count calls with a fake.
class row_sampler {
public:
  row_sampler() = default;
  row_sampler(const row_sampler&) = default;
  row_sampler& operator=(const row_sampler&) = default;
  row_sampler(row_sampler&&) = default;
  row_sampler& operator=(row_sampler&&) = default;
  virtual ~row_sampler() = default;
  virtual measurement run(std::string name, const measure_options& opts, work_counts work,
                          const std::function<void(cudaStream_t)>& body,
                          body_kind kind = body_kind::asynchronous) = 0;
  virtual measurement run_batch(std::string name, const measure_options& opts, work_counts work,
                                const std::function<void(cudaStream_t)>& body) = 0;
  virtual std::optional<measurement> run_timestamps(std::string name, const measure_options& opts,
                                                    work_counts work,
                                                    const std::function<void(cudaStream_t)>& body,
                                                    std::string& why) = 0;
  [[nodiscard]] virtual cudaStream_t stream() const noexcept = 0;
  [[nodiscard]] virtual telemetry_source* telemetry() const noexcept = 0;
};

/// Times GPU regions with a pair of cudaEvents on the workload's stream; flushes L2 before every
/// sample as effective_l2_flush(opts) says (by reading, by writing, or not at all). The body
/// enqueues work on `stream` (and may fork to other streams as long as it joins back before
/// returning). Asynchronous bodies are enqueued behind a blocking kernel (launch-free timing,
/// methodology.md); a sample whose blocking kernel timed out is discarded and the rest of the
/// measurement is timed without it. With a telemetry source the measurement records what the GPU
/// was doing (telemetry.hpp). Also times the host's enqueue of each sample (host_bound). Each
/// sampler is a strategy over the steps every sampler shares (sampler_frame.hpp): the flush, the
/// blocker, the pre-run that loads the body's kernels, the --concurrent start gate and telemetry.
class gpu_sampler final : public row_sampler {
public:
  gpu_sampler(cudaStream_t stream, cuda::l2_flusher* flusher,
              telemetry_source* telemetry = nullptr);
  measurement run(std::string name, const measure_options& opts, work_counts work,
                  const std::function<void(cudaStream_t)>& body,
                  body_kind kind = body_kind::asynchronous) override;
  /// Back-to-back launches of `body` between two events, about opts.batch_time seconds a sample;
  /// a sample is the mean time of one launch. Never flushed: after the first, back-to-back launches
  /// run warm.
  measurement run_batch(std::string name, const measure_options& opts, work_counts work,
                        const std::function<void(cudaStream_t)>& body) override;
  /// Each sample enqueued behind the blocking kernel as run() does (flushed as run() does), timed
  /// by the GPU's own timestamps of what it ran (cuda::kernel_timestamps). Returns nullopt with
  /// `why` set when CUPTI cannot be used.
  std::optional<measurement> run_timestamps(std::string name, const measure_options& opts,
                                            work_counts work,
                                            const std::function<void(cudaStream_t)>& body,
                                            std::string& why) override;
  /// Up to `count` samples of `body` taken exactly as run() takes them (flushed, behind the
  /// blocking kernel), outside any measurement: no start gate, no telemetry, no statistics. For
  /// calibrating what depends on a body's own time (the test-only delay of test_hooks.hpp).
  std::vector<double> probe(const measure_options& opts,
                            const std::function<void(cudaStream_t)>& body, body_kind kind,
                            int count);
  [[nodiscard]] cudaStream_t stream() const noexcept override { return stream_; }
  [[nodiscard]] cuda::l2_flusher* flusher() const noexcept { return flusher_; }
  [[nodiscard]] telemetry_source* telemetry() const noexcept override { return telemetry_; }

private:
  [[nodiscard]] l2_flush_mode flush_for(const measure_options& opts) const noexcept;
  cudaStream_t stream_;
  cuda::l2_flusher* flusher_;
  telemetry_source* telemetry_;
};

/// False once a blocking kernel timed out in this process (launches serialized by a tool): GPU
/// samples are then timed without one. The reset is for tests.
bool launch_free_timing_usable() noexcept;
void reset_launch_free_timing() noexcept;

/// Times host regions with std::chrono::steady_clock.
measurement measure_host(std::string name, const measure_options& opts, work_counts work,
                         const std::function<void()>& body);

/// The sampling loop shared by both clocks: `sample()` returns one sample in seconds. Once there
/// are --min-samples valid samples (and at least 2) and --min-time of sampled time, the stopping
/// rule (opts.stopping, stopping.hpp) is asked after every sample whether to stop as converged.
/// `opts.timeout` bounds warm-up and sampling together: warm-up ends early once it has used the
/// whole budget, and sampling then takes one sample and stops, not converged.
/// `stop_requested` (SIGINT by default) is checked before every sample, warm-up included: an
/// interruption ends the loop after the current sample, and one that comes before the first
/// sample leaves `samples` empty (the runner then drops the measurement; runner.cpp).
/// A sample that returns NaN is invalid: it is counted, not kept, and does not end warm-up early.
/// `discard`, when given, is asked after each valid sample past warm-up: true keeps the sample out
/// of `samples` and away from the rule (--reject-throttled), in `discarded`; past the timeout
/// three discarded or invalid samples end sampling as invalid ones do.
/// Exposed for tests of the stopping criterion.
struct sampling_outcome {
  std::vector<double> samples;
  bool converged = false;
  stop_reason stopped = stop_reason::interrupted;
  std::size_t invalid = 0;
  std::vector<double> discarded;                      ///< the samples `discard` kept out, in order
  nlohmann::json stopping = nlohmann::json::object(); ///< the rule's record (measurement::stopping)
  /// --reject-throttled's record (measurement::throttled), filled by the sampler frame.
  nlohmann::json throttled = nlohmann::json::object();
};

sampling_outcome sample_until_stable(const measure_options& opts,
                                     const std::function<double()>& sample,
                                     const std::function<bool()>& stop_requested = {},
                                     const std::function<bool()>& discard = {});
/// The same loop with the rule `rule` (reset first) instead of the one `opts` names.
sampling_outcome sample_until_stable(const measure_options& opts, stopping_criterion& rule,
                                     const std::function<double()>& sample,
                                     const std::function<bool()>& stop_requested = {},
                                     const std::function<bool()>& discard = {});

} // namespace gpubench
