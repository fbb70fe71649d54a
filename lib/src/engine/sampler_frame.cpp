#include "gpubench/engine/sampler_frame.hpp"

#include "gpubench/cuda/blocking_kernel.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/runtime.hpp"
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
/// --reject-throttled without telemetry is said once per process, not once per measurement.
std::atomic<bool> throttled_warned{false};

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

private:
  cuda::l2_flusher* flusher_;
  telemetry_source* telemetry_;
  // The blocking kernel gives up after 1 s, far longer than any enqueue of one sample's work.
  std::optional<cuda::blocking_kernel> blocker_;
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
      holding_(steps.hold && !blocking_unusable.load()) {}

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
  if (hold) dev_.block(stream_);
  try {
    enqueue();
  } catch (...) {
    if (hold) dev_.release();
    throw;
  }
  if (hold) dev_.release();
  dev_.synchronize(stream_);
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
  if (opts.reject_throttled <= 0 || !steps_.telemetry) return sample_until_stable(opts, sample);
  // Each valid sample's host window, warm-up included (the last ones are the kept samples').
  std::vector<sample_window> windows;
  auto out = sample_until_stable(opts, [&] {
    const auto begin = std::chrono::steady_clock::now();
    const double x = sample();
    if (!std::isnan(x)) windows.push_back({begin, std::chrono::steady_clock::now()});
    return x;
  });
  reject_throttled(out, std::move(windows), opts.reject_throttled);
  return out;
}

void sampler_frame::reject_throttled(sampling_outcome& out, std::vector<sample_window> windows,
                                     double fraction) {
  windows.erase(windows.begin(),
                windows.begin() +
                    static_cast<std::ptrdiff_t>(windows.size() -
                                                std::min(windows.size(), out.samples.size())));
  std::string missing;
  if (telemetry_open_) {
    telemetry_open_ = false;
    closed_telemetry_ = dev_.telemetry_stop();
    if (!closed_telemetry_->value("available", false))
      missing = closed_telemetry_->value("reason", std::string("telemetry unavailable"));
  } else {
    missing = "no telemetry source";
  }
  if (missing.empty()) {
    out.throttled =
        reject_throttled_samples(out.samples, windows, dev_.telemetry_readings(), fraction);
    return;
  }
  out.throttled = throttled_not_checked(fraction, "no telemetry: " + missing);
  if (!throttled_warned.exchange(true))
    std::fprintf(stderr,
                 "gpubench: warning: --reject-throttled needs GPU telemetry (NVML), which is "
                 "unavailable (%s); no sample is rejected\n",
                 missing.c_str());
}

void sampler_frame::finish(measurement& m) {
  start(m.name);
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
