#include "gpubench/engine/sampler_frame.hpp"

#include "gpubench/cuda/blocking_kernel.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/engine/measurement_start.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <atomic>
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
  return sample_until_stable(opts, sample);
}

void sampler_frame::finish(measurement& m) {
  start(m.name);
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
