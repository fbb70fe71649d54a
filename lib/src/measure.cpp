#include "gpubench/measure.hpp"

#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/multi_gpu_concurrent.hpp"

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
  notify_measurement_start(name, stream_); // multi-GPU start line (issue 16)
  const cuda::event start;
  const cuda::event stop;
  const bool cold = !opts.warm && flusher_ != nullptr;
  auto outcome = sample_until_stable(opts, [&] {
    if (cold) flusher_->flush(stream_); // outside the timed region
    start.record(stream_);
    body(stream_);
    stop.record(stream_);
    stop.synchronize();
    return cuda::elapsed_seconds(start, stop);
  });
  return from_samples(std::move(name), clock_kind::gpu, std::move(outcome), std::move(work), cold);
}

measurement measure_host(std::string name, const measure_options& opts, work_counts work,
                         const std::function<void()>& body) {
  using clock = std::chrono::steady_clock;
  notify_measurement_start(name, nullptr); // multi-GPU start line (issue 16)
  auto outcome = sample_until_stable(opts, [&] {
    const auto t0 = clock::now();
    body();
    return std::chrono::duration<double>(clock::now() - t0).count();
  });
  return from_samples(std::move(name), clock_kind::host, std::move(outcome), std::move(work),
                      false);
}

} // namespace gpubench
