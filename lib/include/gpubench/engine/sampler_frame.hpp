#pragma once
// The steps every GPU sampler shares, composed in one place: the L2 flush before each sample, the
// blocking kernel that holds the stream while a sample is enqueued, the SM clock probes around
// each sample (and --reject-throttled, judged on them as samples are taken), the untimed pre-run
// that loads the body's kernels (lazy module loading), the --concurrent start gate and the
// telemetry scope.
// The samplers (events, batch and timestamps in measure.cpp, energy in energy_sampler.cpp) are
// strategies over a sampler_frame: each says which steps it takes (sampler_steps) and what one
// sample is; the order of the steps is the frame's (architecture.md, "The samplers").
#include "gpubench/engine/measure.hpp"
#include "gpubench/engine/throttled.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// What a frame does to the GPU and to the other GPU threads, behind an interface so that the
/// composition can be checked without a GPU (tests/unit/sampler_frame_test.cpp records the calls).
class frame_device {
public:
  frame_device() = default;
  frame_device(const frame_device&) = delete;
  frame_device& operator=(const frame_device&) = delete;
  frame_device(frame_device&&) = delete;
  frame_device& operator=(frame_device&&) = delete;
  virtual ~frame_device() = default;
  /// Enqueues the flush `mode` asks for on `s` (never called with none).
  virtual void flush(l2_flush_mode mode, cudaStream_t s) = 0;
  /// The blocking kernel: hold `s` until release(); timed_out() after the stream passed it.
  virtual void block(cudaStream_t s) = 0;
  virtual void release() noexcept = 0;
  [[nodiscard]] virtual bool timed_out() const noexcept = 0;
  virtual void synchronize(cudaStream_t s) = 0;
  /// The --concurrent start gate (multi_gpu_concurrent.hpp): returns once every GPU thread has
  /// reached the start of its measurement `name`; `s` then waits on the GPU for the release.
  virtual void start_gate(std::string_view name, cudaStream_t s) = 0;
  /// The telemetry source, or false when the frame has none.
  [[nodiscard]] virtual bool has_telemetry() const noexcept = 0;
  virtual void telemetry_start() = 0;
  virtual nlohmann::json telemetry_stop() = 0;
  /// The stamped readings of the scope telemetry_stop() closed (telemetry_source::readings()).
  virtual std::vector<gpu_reading> telemetry_readings() { return {}; }
  /// The SM clock probes (cuda/sm_clock_probe.hpp). clock_open() is called once, before any
  /// sample is held, and returns the timer's resolution in ns (0: the device has no probe, and
  /// samples get no clock); clock_begin/clock_end bracket a sample's timed work on `s`;
  /// clock_read() gives what they counted once the stream has passed clock_end.
  virtual double clock_open() { return 0; }
  virtual void clock_begin(cudaStream_t /*s*/) {}
  virtual void clock_end(cudaStream_t /*s*/) {}
  virtual std::optional<sm_clock_sample> clock_read() { return std::nullopt; }
};

/// The real device: cuda::l2_flusher, cuda::blocking_kernel (1 s timeout), the thread's
/// measurement-start hook and a telemetry_source (either may be null).
std::unique_ptr<frame_device> make_cuda_frame_device(cuda::l2_flusher* flusher,
                                                     telemetry_source* telemetry);

/// Which shared steps a sampler takes. Every sampler passes the start gate exactly once.
struct sampler_steps {
  bool flush = true;     ///< flush L2 (as effective_l2_flush says) before the pre-run and samples
  bool hold = true;      ///< enqueue each sample behind the blocking kernel
  bool telemetry = true; ///< record what the GPU was doing into the measurement
  bool clock = true;     ///< count each sample's SM clock on the GPU (and judge it)
  /// A blocker that times out means launches are serialized in this process (a tool): later
  /// measurements are timed without one too (launch_free_timing_usable()). false: only this
  /// measurement stops holding.
  bool hold_loss_is_process_wide = false;
};

/// The steps of a strategy that runs its body back to back (energy): neither flushed nor held,
/// and no telemetry scope (it reads the monitor itself; the row keeps its own telemetry).
inline sampler_steps back_to_back_steps() {
  sampler_steps s;
  s.flush = false;
  s.hold = false;
  s.telemetry = false;
  s.clock = false;
  return s;
}

/// One measurement's frame. The order is fixed here: preload() (and whatever untimed calibration
/// the strategy needs), then start() (the start gate, then telemetry), then the samples, each
/// through enqueue(), then finish(). A frame whose strategy measured nothing still passes the
/// gate in finish(), so every GPU thread of --concurrent arrives at the same gates in the same
/// order.
class sampler_frame final {
public:
  sampler_frame(frame_device& dev, cudaStream_t stream, l2_flush_mode flush, sampler_steps steps);
  sampler_frame(const sampler_frame&) = delete;
  sampler_frame& operator=(const sampler_frame&) = delete;
  sampler_frame(sampler_frame&&) = delete;
  sampler_frame& operator=(sampler_frame&&) = delete;
  ~sampler_frame();

  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  /// The flush each sample gets (none without the flush step).
  [[nodiscard]] l2_flush_mode flush_mode() const noexcept { return flush_; }
  [[nodiscard]] bool cold() const noexcept { return flush_ != l2_flush_mode::none; }
  /// Samples are still enqueued behind the blocking kernel.
  [[nodiscard]] bool holding() const noexcept { return holding_; }

  /// The untimed pre-run: the flush, `body`, then the host waits for the stream. Kernels load at
  /// their first launch, and a load can wait for an idle GPU: behind the blocking kernel it would
  /// stall until the blocker's timeout, so every kernel the samples launch is launched here first.
  void preload(const std::function<void(cudaStream_t)>& body);
  /// One sample's enqueue, behind the blocking kernel while holding (released once the work is
  /// enqueued, or when `enqueue` throws): the flush (when cold), the opening clock probe,
  /// `enqueue` (the sample's timed work), the closing probe; then the host waits for the stream.
  /// False when the blocker gave up before its release (the host waited for the GPU while
  /// enqueuing): the sample is not launch-free, and holding stops.
  bool enqueue(const std::function<void()>& enqueue);
  /// The start gate (once; later calls do nothing), then the telemetry scope opens.
  void start(std::string_view name);
  [[nodiscard]] bool started() const noexcept { return started_; }
  /// start(name), then the stopping rule over `sample` (sample_until_stable). Each valid sample's
  /// SM clock (from the probes of its enqueue) is recorded; with --reject-throttled
  /// (opts.reject_throttled > 0) a sample whose clock fell below the fraction of the running
  /// median is discarded before the rule sees it (engine/throttled.hpp; outcome.throttled says
  /// what was done), and with the telemetry step the telemetry scope closes right after the last
  /// sample for NVML's second opinion.
  sampling_outcome sample(std::string_view name, const measure_options& opts,
                          const std::function<double()>& sample);
  /// Passes the gate if nothing did yet; closes the telemetry scope into `m.telemetry`; the
  /// samples' clock record goes to `m.sm_clock`.
  void finish(measurement& m);
  /// finish() for a strategy that records no measurement of its own (energy).
  void finish(std::string_view name);

private:
  frame_device& dev_;
  cudaStream_t stream_;
  l2_flush_mode flush_;
  sampler_steps steps_;
  bool holding_;
  bool started_ = false;
  bool telemetry_open_ = false;
  /// The telemetry of a scope closed before finish() (--reject-throttled), for finish() to keep.
  std::optional<nlohmann::json> closed_telemetry_;
  double clock_resolution_ns_ = 0;            ///< 0: no clock probes
  std::optional<sm_clock_sample> last_clock_; ///< the last enqueue's
  nlohmann::json clock_record_;               ///< the sampled measurement's "sm_clock"
  void flush();
  void nvml_opinion(sampling_outcome& out, const std::vector<sample_window>& kept_windows,
                    double fraction);
};

} // namespace gpubench
