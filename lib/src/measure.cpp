#include "gpubench/measure.hpp"

#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/test_delay.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/test_slowdown.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpubench {

void finalize(measurement& m) {
  m.stats = summarize(m.samples);
  m.rates = nlohmann::json::object();
  if (m.stats.median > 0) {
    if (m.work.bytes > 0) m.rates["bytes_per_s"] = m.work.bytes / m.stats.median;
    if (m.work.items > 0) m.rates["items_per_s"] = m.work.items / m.stats.median;
  }
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
  // Warm-up spends the same --timeout budget as sampling; once it is spent, sampling still takes
  // its one sample (the loop below checks the time after each), so the measurement has data.
  for (int i = 0; i < opts.warmup && !interrupted() && elapsed() < opts.timeout; ++i)
    (void)sample();

  sampling_outcome out;
  double sampled = 0;
  // Running sums for the relative standard deviation, so each check is O(1).
  double sum = 0;
  double sum_sq = 0;
  while (!interrupted()) {
    const double t = sample();
    out.samples.push_back(t);
    sampled += t;
    sum += t;
    sum_sq += t * t;
    const auto n = static_cast<double>(out.samples.size());
    if (out.samples.size() >= static_cast<std::size_t>(opts.min_samples) &&
        sampled >= opts.min_time && n > 1) {
      const double mean = sum / n;
      const double var = std::max(0.0, (sum_sq - n * mean * mean) / (n - 1));
      if (mean > 0 && std::sqrt(var) / mean <= opts.max_noise) {
        out.converged = true;
        break;
      }
    }
    if (out.samples.size() >= static_cast<std::size_t>(opts.max_samples)) break;
    if (elapsed() >= opts.timeout) break;
  }
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
  m.cold = cold;
  m.work = std::move(work);
  finalize(m);
  return m;
}
} // namespace

gpu_sampler::gpu_sampler(cudaStream_t stream, cuda::l2_flusher* flusher)
    : stream_(stream), flusher_(flusher) {}

measurement gpu_sampler::run(std::string name, const measure_options& opts, work_counts work,
                             const std::function<void(cudaStream_t)>& body) {
  using clock = std::chrono::steady_clock;
  const cuda::event start;
  const cuda::event stop;
  const bool cold = !opts.warm && flusher_ != nullptr;
  std::vector<double> enqueue;
  std::uint64_t delay_ns = 0;
  const auto one = [&](bool timed, std::uint64_t hold_ns = 0) {
    if (cold) flusher_->flush(stream_); // outside the timed region
    // Launch-free reference: the GPU is held by a spin while the host enqueues the body, so the
    // timed region sees no gaps waiting for the host.
    if (hold_ns > 0) cuda::launch_delay_ns(hold_ns, stream_);
    start.record(stream_);
    const auto t0 = clock::now();
    body(stream_);
    if (timed) enqueue.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    if (delay_ns > 0) cuda::launch_delay_ns(delay_ns, stream_);
    stop.record(stream_);
    stop.synchronize();
    return cuda::elapsed_seconds(start, stop);
  };
  // Test-only (GPUBENCH_TEST_SLOWDOWN): the delay is a fraction of this measurement's own median,
  // taken from three untimed samples first, so one knob value means the same relative slowdown
  // for every point.
  if (const auto& knob = test_slowdown_from_env(); knob && knob->measurement == name) {
    std::vector<double> calib;
    for (int i = 0; i < 3; ++i) calib.push_back(one(false));
    delay_ns = static_cast<std::uint64_t>(knob->fraction * summarize(calib).median * 1e9);
  }
  auto outcome = sample_until_stable(opts, [&] { return one(true); });
  const std::size_t warmups = enqueue.size() - std::min(enqueue.size(), outcome.samples.size());
  enqueue.erase(enqueue.begin(), enqueue.begin() + static_cast<std::ptrdiff_t>(warmups));
  auto m =
      from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work), cold);
  if (!enqueue.empty() && m.stats.median > 0) {
    m.host_enqueue_s = summarize(enqueue).median;
    m.host_bound = m.host_enqueue_s >= host_bound_enqueue_fraction * m.stats.median;
    // Three launch-free samples, unless a sample is long enough that launch gaps cannot matter
    // (or the run is being interrupted): the GPU is held for twice the enqueue time plus 50 us.
    if (m.stats.median <= launch_free_max_sample_s && !interrupt_requested()) {
      const double hold_s = std::min(2 * m.host_enqueue_s + 50e-6, 0.05);
      std::vector<double> free;
      for (int i = 0; i < 3; ++i)
        free.push_back(one(false, static_cast<std::uint64_t>(hold_s * 1e9)));
      m.launch_free_s = summarize(free).median;
      if (m.launch_free_s > 0 && m.stats.median >= host_bound_gap_ratio * m.launch_free_s)
        m.host_bound = true;
    }
  }
  return m;
}

measurement measure_host(std::string name, const measure_options& opts, work_counts work,
                         const std::function<void()>& body) {
  using clock = std::chrono::steady_clock;
  auto outcome = sample_until_stable(opts, [&] {
    const auto t0 = clock::now();
    body();
    return std::chrono::duration<double>(clock::now() - t0).count();
  });
  return from_samples(std::move(name), clock_kind::host, std::move(outcome), std::move(work),
                      false);
}

} // namespace gpubench
