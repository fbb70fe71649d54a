#include "gpubench/engine/sampler_frame.hpp"

#include "gpubench/cuda/blocking_kernel.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/sm_clock_probe.hpp"
#include "gpubench/engine/measurement_start.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

namespace gpubench {

namespace {
/// Set once a blocking kernel timed out in a frame whose loss is process-wide: launches are being
/// serialized (compute-sanitizer, CUDA_LAUNCH_BLOCKING=1...), so every later blocker would wait
/// its full timeout too.
std::atomic<bool> blocking_unusable{false};

class cuda_frame_device final : public frame_device {
public:
  cuda_frame_device(cuda::l2_flusher* flusher, telemetry_source* telemetry)
      : flusher_(flusher), telemetry_(telemetry) {}
  void flush(l2_flush_mode mode, cudaStream_t s) override {
    if (mode == l2_flush_mode::read) flusher_->flush_by_reading(s);
    if (mode == l2_flush_mode::write) flusher_->flush_by_writing(s);
  }
  void block(cudaStream_t s) override {
    // Made at the first hold: a frame that never holds (energy) needs no GPU memory for it.
    if (!blocker_) blocker_.emplace(1.0);
    blocker_->block(s);
  }
  void release() noexcept override { blocker_->release(); }
  [[nodiscard]] bool timed_out() const noexcept override { return blocker_->timed_out(); }
  void synchronize(cudaStream_t s) override { cuda::synchronize(s); }
  void start_gate(std::string_view name, cudaStream_t s) override {
    notify_measurement_start(name, s);
  }
  [[nodiscard]] bool has_telemetry() const noexcept override { return telemetry_ != nullptr; }
  void telemetry_start() override { telemetry_->start(); }
  nlohmann::json telemetry_stop() override { return telemetry_->stop(); }
  std::vector<gpu_reading> telemetry_readings() override { return telemetry_->readings(); }
  double clock_open() override {
    if (!probe_) probe_.emplace();
    return static_cast<double>(cuda::globaltimer_resolution_ns());
  }
  void clock_begin(cudaStream_t s) override { probe_->begin(s); }
  void clock_end(cudaStream_t s) override { probe_->end(s); }
  std::optional<sm_clock_sample> clock_read() override {
    const auto stamp = probe_->read();
    if (!stamp) return std::nullopt;
    return sm_clock_sample{static_cast<double>(stamp->cycles), static_cast<double>(stamp->ns)};
  }

private:
  cuda::l2_flusher* flusher_;
  telemetry_source* telemetry_;
  // The blocking kernel gives up after 1 s, far longer than any enqueue of one sample's work.
  std::optional<cuda::blocking_kernel> blocker_;
  std::optional<cuda::sm_clock_probe> probe_;
};
} // namespace

bool launch_free_timing_usable() noexcept { return !blocking_unusable.load(); }
void reset_launch_free_timing() noexcept { blocking_unusable.store(false); }

std::unique_ptr<frame_device> make_cuda_frame_device(cuda::l2_flusher* flusher,
                                                     telemetry_source* telemetry) {
  return std::make_unique<cuda_frame_device>(flusher, telemetry);
}

sampler_frame::sampler_frame(frame_device& dev, cudaStream_t stream, l2_flush_mode flush,
                             sampler_steps steps)
    : dev_(dev), stream_(stream), flush_(steps.flush ? flush : l2_flush_mode::none), steps_(steps),
      holding_(steps.hold && !blocking_unusable.load()),
      clock_resolution_ns_(steps.clock ? dev_.clock_open() : 0) {}

sampler_frame::~sampler_frame() {
  if (telemetry_open_) (void)dev_.telemetry_stop(); // a strategy that threw
}

void sampler_frame::flush() {
  if (cold()) dev_.flush(flush_, stream_);
}

void sampler_frame::preload(const std::function<void(cudaStream_t)>& body) {
  flush();
  body(stream_);
  dev_.synchronize(stream_);
}

bool sampler_frame::enqueue(const std::function<void()>& enqueue) {
  const bool hold = holding_;
  const bool clock = clock_resolution_ns_ > 0;
  if (hold) dev_.block(stream_);
  try {
    flush(); // outside the timed region and the clock's window
    if (clock) dev_.clock_begin(stream_);
    enqueue();
    if (clock) dev_.clock_end(stream_);
  } catch (...) {
    if (hold) dev_.release();
    throw;
  }
  if (hold) dev_.release();
  dev_.synchronize(stream_);
  last_clock_ = clock ? dev_.clock_read() : std::nullopt;
  if (!hold || !dev_.timed_out()) return true;
  holding_ = false;
  if (steps_.hold_loss_is_process_wide && !blocking_unusable.exchange(true))
    std::fprintf(stderr, "gpubench: warning: the blocking kernel timed out (launches serialized, "
                         "e.g. by compute-sanitizer or CUDA_LAUNCH_BLOCKING=1); GPU samples from "
                         "here on include the launch (timing: includes_launch)\n");
  return false;
}

void sampler_frame::start(std::string_view name) {
  if (started_) return;
  started_ = true;
  dev_.start_gate(name, stream_);
  if (steps_.telemetry && dev_.has_telemetry()) {
    dev_.telemetry_start();
    telemetry_open_ = true;
  }
}

sampling_outcome sampler_frame::sample(std::string_view name, const measure_options& opts,
                                       const std::function<double()>& sample) {
  start(name);
  const double fraction = opts.reject_throttled;
  clock_judge judge(fraction, clock_resolution_ns_);
  // The host windows of the kept samples, for NVML's second opinion.
  const bool nvml = fraction > 0 && telemetry_open_;
  std::vector<sample_window> kept_windows;
  sample_window last{};
  auto out = sample_until_stable(
      opts,
      [&] {
        last_clock_.reset();
        if (nvml) last.begin = std::chrono::steady_clock::now();
        const double x = sample();
        if (!std::isnan(x)) {
          if (nvml) last.end = std::chrono::steady_clock::now();
          judge.seen(last_clock_);
        }
        return x;
      },
      {},
      [&] {
        const bool drop = judge.discard();
        if (!drop && nvml) kept_windows.push_back(last);
        return drop;
      });
  if (out.samples.empty() && !out.discarded.empty()) {
    // Every sample was throttled: the measurement keeps them, and the record says so.
    out.samples = std::move(out.discarded);
    out.discarded.clear();
    judge.keep_all();
  }
  clock_record_ = judge.sm_clock();
  if (fraction <= 0) return out;
  out.throttled = judge.record(out.samples.size());
  if (nvml) nvml_opinion(out, kept_windows, fraction);
  return out;
}

void sampler_frame::nvml_opinion(sampling_outcome& out,
                                 const std::vector<sample_window>& kept_windows, double fraction) {
  telemetry_open_ = false;
  closed_telemetry_ = dev_.telemetry_stop();
  if (!closed_telemetry_->value("available", false)) {
    out.throttled["nvml"] = {
        {"reason", closed_telemetry_->value("reason", std::string("telemetry unavailable"))}};
    return;
  }
  out.throttled["nvml"] = nvml_throttle_opinion(kept_windows, dev_.telemetry_readings(), fraction);
}

void sampler_frame::finish(measurement& m) {
  start(m.name);
  if (!clock_record_.empty()) m.sm_clock = std::move(clock_record_);
  if (closed_telemetry_) {
    m.telemetry = std::move(*closed_telemetry_);
    closed_telemetry_.reset();
  }
  if (!telemetry_open_) return;
  telemetry_open_ = false;
  m.telemetry = dev_.telemetry_stop();
}

void sampler_frame::finish(std::string_view name) {
  start(name);
  if (!telemetry_open_) return;
  telemetry_open_ = false;
  (void)dev_.telemetry_stop();
}

} // namespace gpubench
