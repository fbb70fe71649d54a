#include "gpubench/engine/measure.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/kernel_timestamps.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/test_delay.hpp"
#include "gpubench/engine/measurement_start.hpp"
#include "gpubench/engine/sampler_frame.hpp"
#include "gpubench/engine/test_hooks.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace gpubench {

l2_flush_mode effective_l2_flush(const measure_options& opts) noexcept {
  if (opts.warm) return l2_flush_mode::none;
  return opts.l2_flush.value_or(l2_flush_mode::read);
}

std::unique_ptr<stopping_criterion> make_stopping_criterion(const measure_options& opts) {
  if (opts.stopping == stopping_rule::entropy)
    return std::make_unique<entropy_criterion>(opts.entropy_max_angle, opts.entropy_min_r2);
  return std::make_unique<stable_criterion>(opts.max_noise, opts.min_samples);
}

sampling_outcome sample_until_stable(const measure_options& opts,
                                     const std::function<double()>& sample,
                                     const std::function<bool()>& stop_requested,
                                     const std::function<bool()>& discard) {
  const auto rule = make_stopping_criterion(opts);
  return sample_until_stable(opts, *rule, sample, stop_requested, discard);
}

sampling_outcome sample_until_stable(const measure_options& opts, stopping_criterion& rule,
                                     const std::function<double()>& sample,
                                     const std::function<bool()>& stop_requested,
                                     const std::function<bool()>& discard) {
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
  rule.reset();
  out.stopped = stop_reason::interrupted;
  while (!interrupted()) {
    const double t = sample();
    if (std::isnan(t)) {
      ++out.invalid;
    } else if (discard && discard()) {
      out.discarded.push_back(t);
    } else {
      out.samples.push_back(t);
      sampled += t;
      rule.add(t);
    }
    if (out.samples.size() >= static_cast<std::size_t>(opts.min_samples) &&
        sampled >= opts.min_time && out.samples.size() > 1) {
      if (const auto reason = rule.done()) {
        out.converged = true;
        out.stopped = *reason;
        break;
      }
    }
    if (out.samples.size() >= static_cast<std::size_t>(opts.max_samples)) {
      out.stopped = stop_reason::max_samples;
      break;
    }
    // Past the timeout, sampling still waits for one valid sample so the measurement has data,
    // but a run of invalid ones cannot keep it going.
    if (elapsed() >= opts.timeout &&
        (!out.samples.empty() || out.invalid + out.discarded.size() >= 3)) {
      out.stopped = stop_reason::timeout;
      break;
    }
  }
  out.stopping = rule.record();
  return out;
}

namespace {
measurement from_samples(std::string name, clock_kind clock, sampling_outcome outcome,
                         work_counts work, bool cold) {
  measurement m;
  m.name = std::move(name);
  m.clock = clock;
  m.samples = std::move(outcome.samples);
  m.converged = outcome.converged;
  m.stopped = outcome.stopped;
  m.invalid_samples = outcome.invalid;
  m.stopping = std::move(outcome.stopping);
  m.throttled = std::move(outcome.throttled);
  m.cold = cold;
  m.work = std::move(work);
  finalize(m);
  return m;
}

/// The events strategy's steps: flushed and held (unless the body waits for the GPU while it
/// enqueues), and a blocker lost to serialized launches is lost for the process.
sampler_steps event_steps(body_kind kind) {
  sampler_steps s;
  s.hold = kind == body_kind::asynchronous;
  s.hold_loss_is_process_wide = true;
  return s;
}

/// One events sample: the flush, then `body` between the event pair, behind the blocking kernel
/// while the frame holds, or behind a fixed `hold_ns` spin instead (the launch-free reference of
/// a body that cannot be blocked). `enqueue_s` gets the host's time to enqueue the body. NaN when
/// the blocking kernel timed out: that sample is discarded.
double event_sample(sampler_frame& frame, const cuda::event& start, const cuda::event& stop,
                    const std::function<void(cudaStream_t)>& body, double& enqueue_s,
                    std::uint64_t hold_ns = 0) {
  using clock = std::chrono::steady_clock;
  const cudaStream_t s = frame.stream();
  const bool valid = frame.enqueue([&] { // after the frame's flush and clock probe
    if (hold_ns > 0) cuda::launch_delay_ns(hold_ns, s);
    start.record(s);
    const auto t0 = clock::now();
    body(s);
    enqueue_s = std::chrono::duration<double>(clock::now() - t0).count();
    stop.record(s);
  });
  return valid ? cuda::elapsed_seconds(start, stop) : std::numeric_limits<double>::quiet_NaN();
}
} // namespace

gpu_sampler::gpu_sampler(cudaStream_t stream, cuda::l2_flusher* flusher,
                         telemetry_source* telemetry)
    : stream_(stream), flusher_(flusher), telemetry_(telemetry) {}

l2_flush_mode gpu_sampler::flush_for(const measure_options& opts) const noexcept {
  return flusher_ != nullptr ? effective_l2_flush(opts) : l2_flush_mode::none;
}

std::vector<double> gpu_sampler::probe(const measure_options& opts,
                                       const std::function<void(cudaStream_t)>& body,
                                       body_kind kind, int count) {
  auto dev = make_cuda_frame_device(flusher_, nullptr);
  sampler_frame frame(*dev, stream_, flush_for(opts), event_steps(kind));
  const cuda::event start;
  const cuda::event stop;
  if (frame.holding()) frame.preload(body);
  std::vector<double> out;
  double enqueue_s = 0;
  for (int i = 0; i < 2 * count && static_cast<int>(out.size()) < count; ++i)
    if (const double x = event_sample(frame, start, stop, body, enqueue_s); !std::isnan(x))
      out.push_back(x);
  return out;
}

measurement gpu_sampler::run(std::string name, const measure_options& opts, work_counts work,
                             const std::function<void(cudaStream_t)>& body, body_kind kind) {
  // The test-only GPUBENCH_TEST_SLOWDOWN seam (test_hooks.hpp): `body` itself unless the knob
  // names this measurement. Decided here, before the frame, never inside a sample.
  const auto timed_body =
      test_slowdown_body(name, body, [&] { return probe(opts, body, kind, 3); });
  auto dev = make_cuda_frame_device(flusher_, telemetry_);
  sampler_frame frame(*dev, stream_, flush_for(opts), event_steps(kind));
  const cuda::event start;
  const cuda::event stop;
  if (frame.holding()) frame.preload(timed_body);
  std::vector<double> enqueue; ///< host seconds to enqueue each valid timed sample's work
  auto outcome = frame.sample(name, opts, [&] {
    double took = 0;
    const double x = event_sample(frame, start, stop, timed_body, took);
    if (!std::isnan(x)) enqueue.push_back(took);
    return x;
  });
  const bool blocked = frame.holding();
  // The enqueue times of the samples taken (those --reject-throttled discarded included).
  const std::size_t taken = outcome.samples.size() + outcome.discarded.size();
  const std::size_t warmups = enqueue.size() - std::min(enqueue.size(), taken);
  enqueue.erase(enqueue.begin(), enqueue.begin() + static_cast<std::ptrdiff_t>(warmups));
  auto m = from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work),
                        frame.cold());
  m.timing = blocked ? gpu_timing::launch_free : gpu_timing::includes_launch;
  m.l2_flush = frame.flush_mode();
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
      double ignored = 0;
      for (int i = 0; i < 3; ++i)
        free.push_back(event_sample(frame, start, stop, timed_body, ignored, hold_ns));
      m.launch_free_s = summarize(free).median;
      if (m.launch_free_s > 0 && m.stats.median >= host_bound_gap_ratio * m.launch_free_s)
        m.host_bound = true;
    }
  }
  frame.finish(m);
  return m;
}

measurement gpu_sampler::run_batch(std::string name, const measure_options& opts, work_counts work,
                                   const std::function<void(cudaStream_t)>& body) {
  // The launches of a sample are enqueued behind the blocking kernel, so the GPU runs them back to
  // back whatever the host's launch rate: for a kernel shorter than a launch (a few us) a loop of
  // launches between two events times the host, not the GPU. At most `max_held` launches are held
  // at once, far inside the driver's queue; a blocker that times out (the host waited for the GPU
  // while enqueuing) ends holding for this measurement only. Never flushed.
  constexpr long max_held = 256;
  sampler_steps steps;
  steps.flush = false;
  auto dev = make_cuda_frame_device(flusher_, telemetry_);
  sampler_frame frame(*dev, stream_, l2_flush_mode::none, steps);
  const cuda::event start;
  const cuda::event stop;
  const auto timed = [&](long launches) {
    if (!frame.enqueue([&] {
          start.record(stream_);
          for (long i = 0; i < launches; ++i) body(stream_);
          stop.record(stream_);
        }))
      return std::numeric_limits<double>::quiet_NaN();
    return cuda::elapsed_seconds(start, stop);
  };
  frame.preload(body); // first-launch costs (lazy module loading) outside any held sample
  (void)timed(3);
  // Launches per sample from a short calibration: ten launches, timed the same way.
  double each = timed(10) / 10;
  if (std::isnan(each)) each = timed(10) / 10;
  const double target = opts.batch_time > 0 ? opts.batch_time : 0.01;
  const long launches =
      each > 0 ? std::clamp(static_cast<long>(target / each), 1L, max_held) : max_held;
  auto outcome =
      frame.sample(name, opts, [&] { return timed(launches) / static_cast<double>(launches); });
  auto m =
      from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work), false);
  m.timing = gpu_timing::batch;
  m.l2_flush = l2_flush_mode::none;
  m.batch_launches = launches;
  m.batch_launch_free = frame.holding();
  frame.finish(m);
  return m;
}

std::optional<measurement>
gpu_sampler::run_timestamps(std::string name, const measure_options& opts, work_counts work,
                            const std::function<void(cudaStream_t)>& body, std::string& why) {
  auto trace = cuda::kernel_timestamps::open(why);
  if (!trace) return std::nullopt;
  // Flushed and held as run() does: a body of several kernels then runs them back to back, so
  // the span holds the GPU's gaps between them, not the host's.
  auto dev = make_cuda_frame_device(flusher_, telemetry_);
  sampler_frame frame(*dev, stream_, flush_for(opts), sampler_steps{});
  // A body that throws leaves the window open: the tracer's destructor closes it.
  const auto one = [&] {
    const bool valid = frame.enqueue([&] { // after the frame's flush: not part of the sample
      trace->begin();
      body(stream_);
      trace->end();
    });
    const double span = trace->span_s(); // NaN when CUPTI dropped the sample's records
    return valid ? span : std::numeric_limits<double>::quiet_NaN();
  };
  // Tracing instruments the kernels at their next launch, which may wait for an idle GPU: one
  // untimed run outside any hold.
  frame.preload(body);
  (void)trace->span_s();
  auto outcome = frame.sample(name, opts, one);
  auto m = from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work),
                        frame.cold());
  m.timing = gpu_timing::timestamps;
  m.l2_flush = frame.flush_mode();
  m.launch_free_s = m.stats.median;
  frame.finish(m);
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
