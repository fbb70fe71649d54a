#include "gpubench/engine/measure.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/blocking_kernel.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/kernel_timestamps.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/test_delay.hpp"
#include "gpubench/engine/measurement_start.hpp"
#include "gpubench/engine/test_slowdown.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gpubench {

l2_flush_mode effective_l2_flush(const measure_options& opts) noexcept {
  if (opts.warm) return l2_flush_mode::none;
  return opts.l2_flush.value_or(l2_flush_mode::read);
}

double trimmed_mean_rel_ci95(std::vector<double> samples) {
  const std::size_t n = samples.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  std::sort(samples.begin(), samples.end());
  const std::size_t g = n / 10; // trimmed at each end
  const double lo = samples[g];
  const double hi = samples[n - 1 - g];
  double trimmed = 0;
  for (std::size_t i = g; i < n - g; ++i) trimmed += samples[i];
  trimmed /= static_cast<double>(n - 2 * g);
  // Winsorized variance: the trimmed samples replaced by the nearest kept one.
  double w_mean = 0;
  for (const double x : samples) w_mean += std::clamp(x, lo, hi);
  w_mean /= static_cast<double>(n);
  double w_var = 0;
  for (const double x : samples) {
    const double d = std::clamp(x, lo, hi) - w_mean;
    w_var += d * d;
  }
  w_var /= static_cast<double>(n - 1);
  const double kept = static_cast<double>(n - 2 * g) / static_cast<double>(n);
  const double se = std::sqrt(w_var) / (kept * std::sqrt(static_cast<double>(n)));
  return trimmed > 0 ? 1.96 * se / trimmed : std::numeric_limits<double>::infinity();
}

sampling_outcome sample_until_stable(const measure_options& opts,
                                     const std::function<double()>& sample,
                                     const std::function<bool()>& stop_requested) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(clock::now() - started).count();
  };
  const auto interrupted = [&] {
    return stop_requested ? stop_requested() : interrupt_requested();
  };
  sampling_outcome out;
  // Warm-up spends the same --timeout budget as sampling; once it is spent, sampling still takes
  // its one sample (the loop below checks the time after each), so the measurement has data.
  for (int i = 0; i < opts.warmup && !interrupted() && elapsed() < opts.timeout; ++i)
    if (std::isnan(sample())) ++out.invalid;

  double sampled = 0;
  // Running sums for the relative standard deviation, so each check is O(1).
  double sum = 0;
  double sum_sq = 0;
  // The trimmed interval sorts the samples: checked at geometrically spaced counts only.
  std::size_t next_stable_check = std::max<std::size_t>(20, opts.min_samples);
  out.stopped = stop_reason::interrupted;
  while (!interrupted()) {
    const double t = sample();
    if (std::isnan(t)) {
      ++out.invalid;
    } else {
      out.samples.push_back(t);
      sampled += t;
      sum += t;
      sum_sq += t * t;
    }
    const auto n = static_cast<double>(out.samples.size());
    if (out.samples.size() >= static_cast<std::size_t>(opts.min_samples) &&
        sampled >= opts.min_time && n > 1) {
      const double mean = sum / n;
      const double var = std::max(0.0, (sum_sq - n * mean * mean) / (n - 1));
      if (mean > 0 && std::sqrt(var) / mean <= opts.max_noise) {
        out.converged = true;
        out.stopped = stop_reason::noise;
        break;
      }
      if (out.samples.size() >= next_stable_check) {
        next_stable_check = out.samples.size() + std::max<std::size_t>(1, out.samples.size() / 8);
        if (trimmed_mean_rel_ci95(out.samples) <= opts.max_noise / 4) {
          out.converged = true;
          out.stopped = stop_reason::stable;
          break;
        }
      }
    }
    if (out.samples.size() >= static_cast<std::size_t>(opts.max_samples)) {
      out.stopped = stop_reason::max_samples;
      break;
    }
    // Past the timeout, sampling still waits for one valid sample so the measurement has data,
    // but a run of invalid ones cannot keep it going.
    if (elapsed() >= opts.timeout && (!out.samples.empty() || out.invalid >= 3)) {
      out.stopped = stop_reason::timeout;
      break;
    }
  }
  return out;
}

namespace {
/// Set once a blocking kernel timed out: launches are being serialized (compute-sanitizer,
/// CUDA_LAUNCH_BLOCKING=1...), so every later blocker would wait its full timeout too.
std::atomic<bool> blocking_unusable{false};

/// One sample's enqueue: `enqueue` puts the work on `s`, behind `blocker` when `hold` (released
/// once the work is enqueued, or when `enqueue` throws); then the host waits for `s`. False when
/// the blocker gave up before its release (the body waited for the GPU while enqueuing): the
/// sample is not launch-free and is discarded.
bool enqueue_held(cuda::blocking_kernel& blocker, bool hold, cudaStream_t s,
                  const std::function<void()>& enqueue) {
  if (hold) blocker.block(s);
  try {
    enqueue();
  } catch (...) {
    if (hold) blocker.release();
    throw;
  }
  if (hold) blocker.release();
  cuda::synchronize(s);
  return !(hold && blocker.timed_out());
}

} // namespace

bool launch_free_timing_usable() noexcept { return !blocking_unusable.load(); }
void reset_launch_free_timing() noexcept { blocking_unusable.store(false); }

namespace {
/// Enqueues the flush `mode` asks for on `s` (nothing for none).
void flush_l2(cuda::l2_flusher& flusher, l2_flush_mode mode, cudaStream_t s) {
  if (mode == l2_flush_mode::read) flusher.flush_by_reading(s);
  if (mode == l2_flush_mode::write) flusher.flush_by_writing(s);
}

measurement from_samples(std::string name, clock_kind clock, sampling_outcome outcome,
                         work_counts work, bool cold) {
  measurement m;
  m.name = std::move(name);
  m.clock = clock;
  m.samples = std::move(outcome.samples);
  m.converged = outcome.converged;
  m.stopped = outcome.stopped;
  m.invalid_samples = outcome.invalid;
  m.cold = cold;
  m.work = std::move(work);
  finalize(m);
  return m;
}

/// Starts the telemetry source (if any) and records its findings into the measurement at the end.
class telemetry_scope {
public:
  explicit telemetry_scope(telemetry_source* t) : t_(t) {
    if (t_ != nullptr) t_->start();
  }
  telemetry_scope(const telemetry_scope&) = delete;
  telemetry_scope& operator=(const telemetry_scope&) = delete;
  ~telemetry_scope() {
    if (t_ != nullptr && !stopped_) (void)t_->stop();
  }
  void finish(measurement& m) {
    if (t_ == nullptr) return;
    stopped_ = true;
    m.telemetry = t_->stop();
  }

private:
  telemetry_source* t_;
  bool stopped_ = false;
};
} // namespace

gpu_sampler::gpu_sampler(cudaStream_t stream, cuda::l2_flusher* flusher,
                         telemetry_source* telemetry)
    : stream_(stream), flusher_(flusher), telemetry_(telemetry) {}

measurement gpu_sampler::run(std::string name, const measure_options& opts, work_counts work,
                             const std::function<void(cudaStream_t)>& body, body_kind kind) {
  notify_measurement_start(name, stream_); // multi-GPU start line
  using clock = std::chrono::steady_clock;
  const cuda::event start;
  const cuda::event stop;
  const l2_flush_mode flush = flusher_ != nullptr ? effective_l2_flush(opts) : l2_flush_mode::none;
  const bool cold = flush != l2_flush_mode::none;
  // The blocking kernel gives up after 1 s, far longer than any enqueue of one sample's work.
  cuda::blocking_kernel blocker(1.0);
  bool blocked = kind == body_kind::asynchronous && !blocking_unusable.load();
  telemetry_scope telemetry(telemetry_);
  std::vector<double> enqueue; ///< host seconds to enqueue each valid timed sample's work
  std::uint64_t delay_ns = 0;  ///< GPUBENCH_TEST_SLOWDOWN's delay, when it names this measurement
  // One sample. Behind the blocking kernel unless `hold_ns` > 0, which holds the GPU with a
  // fixed-length spin instead (the launch-free reference of a body that cannot be blocked).
  // NaN when the blocking kernel timed out: that sample is discarded.
  const auto one = [&](bool timed, std::uint64_t hold_ns = 0) {
    double took = 0;
    const bool valid = enqueue_held(blocker, blocked && hold_ns == 0, stream_, [&] {
      if (cold) flush_l2(*flusher_, flush, stream_); // outside the timed region
      if (hold_ns > 0) cuda::launch_delay_ns(hold_ns, stream_);
      start.record(stream_);
      const auto t0 = clock::now();
      body(stream_);
      took = std::chrono::duration<double>(clock::now() - t0).count();
      if (delay_ns > 0) cuda::launch_delay_ns(delay_ns, stream_);
      stop.record(stream_);
    });
    if (!valid) {
      // The body waited for the GPU while enqueuing: this sample is not launch-free, and neither
      // would the next be. Time the rest without the blocker.
      blocked = false;
      if (!blocking_unusable.exchange(true))
        std::fprintf(stderr, "gpubench: warning: the blocking kernel timed out (launches "
                             "serialized, e.g. by compute-sanitizer or CUDA_LAUNCH_BLOCKING=1); "
                             "GPU samples from here on include the launch (timing: "
                             "includes_launch)\n");
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (timed) enqueue.push_back(took);
    return cuda::elapsed_seconds(start, stop);
  };
  // Test-only (GPUBENCH_TEST_SLOWDOWN): the delay is a fraction of this measurement's own median,
  // taken from three untimed samples first, so one knob value means the same relative slowdown
  // for every point.
  if (const auto& knob = test_slowdown_from_env(); knob && knob->measurement == name) {
    std::vector<double> calib;
    for (int i = 0; i < 6 && calib.size() < 3; ++i)
      if (const double x = one(false); !std::isnan(x)) calib.push_back(x);
    if (!calib.empty())
      delay_ns = static_cast<std::uint64_t>(knob->fraction * summarize(calib).median * 1e9);
  }
  if (blocked) {
    // Lazy module loading (CUDA's default) loads a kernel's code at its first launch, and that
    // load can wait for the GPU to go idle: behind the blocking kernel it would stall until the
    // blocker's timeout. One untimed run first loads whatever the body (and the delay) launches.
    if (cold) flush_l2(*flusher_, flush, stream_);
    body(stream_);
    if (delay_ns > 0) cuda::launch_delay_ns(delay_ns, stream_);
    cuda::synchronize(stream_);
  }
  auto outcome = sample_until_stable(opts, [&] { return one(true); });
  const std::size_t warmups = enqueue.size() - std::min(enqueue.size(), outcome.samples.size());
  enqueue.erase(enqueue.begin(), enqueue.begin() + static_cast<std::ptrdiff_t>(warmups));
  auto m =
      from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work), cold);
  m.timing = blocked ? gpu_timing::launch_free : gpu_timing::includes_launch;
  m.l2_flush = flush;
  if (!enqueue.empty() && m.stats.median > 0) {
    m.host_enqueue_s = summarize(enqueue).median;
    // Behind the blocking kernel the host's enqueue is outside the timed region, however slow:
    // only samples timed with their launches can be host-bound.
    m.host_bound = !blocked && m.host_enqueue_s >= host_bound_enqueue_fraction * m.stats.median;
    // Samples behind the blocking kernel are launch-free already. The others get three
    // launch-free samples, unless a sample is long enough that launch gaps cannot matter (or the
    // run is being interrupted): the GPU is held for twice the enqueue time plus 50 us.
    if (blocked) {
      m.launch_free_s = m.stats.median;
    } else if (m.stats.median <= launch_free_max_sample_s && !interrupt_requested()) {
      const std::uint64_t hold_ns = cuda::launch_free_hold_ns(m.host_enqueue_s, 0.05);
      std::vector<double> free;
      free.reserve(3);
      for (int i = 0; i < 3; ++i) free.push_back(one(false, hold_ns));
      m.launch_free_s = summarize(free).median;
      if (m.launch_free_s > 0 && m.stats.median >= host_bound_gap_ratio * m.launch_free_s)
        m.host_bound = true;
    }
  }
  telemetry.finish(m);
  return m;
}

measurement gpu_sampler::run_batch(std::string name, const measure_options& opts, work_counts work,
                                   const std::function<void(cudaStream_t)>& body) {
  const cuda::event start;
  const cuda::event stop;
  // The launches of a sample are enqueued behind the blocking kernel, so the GPU runs them back to
  // back whatever the host's launch rate: for a kernel shorter than a launch (a few us) a loop of
  // launches between two events times the host, not the GPU. At most `max_held` launches are held
  // at once, far inside the driver's queue; a blocker that times out (the host waited for the GPU
  // while enqueuing) ends holding for this measurement only.
  constexpr long max_held = 256;
  cuda::blocking_kernel blocker(1.0);
  bool held = !blocking_unusable.load();
  const auto timed = [&](long launches) {
    if (!enqueue_held(blocker, held, stream_, [&] {
          start.record(stream_);
          for (long i = 0; i < launches; ++i) body(stream_);
          stop.record(stream_);
        })) {
      held = false;
      return std::numeric_limits<double>::quiet_NaN();
    }
    return cuda::elapsed_seconds(start, stop);
  };
  body(stream_); // first-launch costs (lazy module loading) outside any held sample
  cuda::synchronize(stream_);
  (void)timed(3);
  // Launches per sample from a short calibration: ten launches, timed the same way.
  double each = timed(10) / 10;
  if (std::isnan(each)) each = timed(10) / 10;
  const double target = opts.batch_time > 0 ? opts.batch_time : 0.01;
  const long launches =
      each > 0 ? std::clamp(static_cast<long>(target / each), 1L, max_held) : max_held;
  telemetry_scope telemetry(telemetry_);
  auto outcome =
      sample_until_stable(opts, [&] { return timed(launches) / static_cast<double>(launches); });
  auto m =
      from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work), false);
  m.timing = gpu_timing::batch;
  m.l2_flush = l2_flush_mode::none;
  m.batch_launches = launches;
  m.batch_launch_free = held;
  telemetry.finish(m);
  return m;
}

std::optional<measurement>
gpu_sampler::run_timestamps(std::string name, const measure_options& opts, work_counts work,
                            const std::function<void(cudaStream_t)>& body, std::string& why) {
  auto trace = cuda::kernel_timestamps::open(why);
  if (!trace) return std::nullopt;
  const l2_flush_mode flush = flusher_ != nullptr ? effective_l2_flush(opts) : l2_flush_mode::none;
  const bool cold = flush != l2_flush_mode::none;
  // Held as in run(): a body of several kernels then runs them back to back, so the span holds
  // the GPU's gaps between them, not the host's.
  cuda::blocking_kernel blocker(1.0);
  bool held = !blocking_unusable.load();
  // A body that throws leaves the window open: the tracer's destructor closes it.
  const auto one = [&] {
    const bool valid = enqueue_held(blocker, held, stream_, [&] {
      if (cold) flush_l2(*flusher_, flush, stream_); // before begin(): not part of the sample
      trace->begin();
      body(stream_);
      trace->end();
    });
    const double span = trace->span_s(); // NaN when CUPTI dropped the sample's records
    if (!valid) {
      held = false;
      return std::numeric_limits<double>::quiet_NaN();
    }
    return span;
  };
  // Tracing instruments the kernels at their next launch, which may wait for an idle GPU: one
  // untimed run outside any hold.
  if (cold) flush_l2(*flusher_, flush, stream_);
  body(stream_);
  cuda::synchronize(stream_);
  (void)trace->span_s();
  telemetry_scope telemetry(telemetry_);
  auto outcome = sample_until_stable(opts, one);
  auto m =
      from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work), cold);
  m.timing = gpu_timing::timestamps;
  m.l2_flush = flush;
  m.launch_free_s = m.stats.median;
  telemetry.finish(m);
  return m;
}

measurement measure_host(std::string name, const measure_options& opts, work_counts work,
                         const std::function<void()>& body) {
  using clock = std::chrono::steady_clock;
  notify_measurement_start(name, nullptr); // multi-GPU start line
  auto outcome = sample_until_stable(opts, [&] {
    const auto t0 = clock::now();
    body();
    return std::chrono::duration<double>(clock::now() - t0).count();
  });
  return from_samples(std::move(name), clock_kind::host, std::move(outcome), std::move(work),
                      false);
}

} // namespace gpubench
