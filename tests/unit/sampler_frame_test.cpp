// The steps every GPU sampler shares (sampler_frame.hpp), checked through a device that records
// what the frame asks of it: the order of pre-run, start gate, telemetry and samples, one gate
// per measurement whatever the strategy measured, and a lost blocker.
#include "gpubench/engine/sampler_frame.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gpubench;

namespace {

/// Records every call as a word; the blocker "times out" on the block() numbered `time_out_at`.
class recording_device final : public frame_device {
public:
  std::vector<std::string> calls;
  int time_out_at = 0;
  bool telemetry = true;
  bool clock = false; ///< has SM clock probes

  void flush(l2_flush_mode mode, cudaStream_t /*s*/) override {
    calls.push_back(std::string("flush:") + std::string(to_string(mode)));
  }
  void block(cudaStream_t /*s*/) override {
    calls.emplace_back("block");
    timed_out_ = ++blocks_ == time_out_at;
  }
  void release() noexcept override { calls.emplace_back("release"); }
  [[nodiscard]] bool timed_out() const noexcept override { return timed_out_; }
  void synchronize(cudaStream_t /*s*/) override { calls.emplace_back("sync"); }
  void start_gate(std::string_view name, cudaStream_t /*s*/) override {
    calls.push_back("gate:" + std::string(name));
  }
  [[nodiscard]] bool has_telemetry() const noexcept override { return telemetry; }
  void telemetry_start() override { calls.emplace_back("telemetry:start"); }
  nlohmann::json telemetry_stop() override {
    calls.emplace_back("telemetry:stop");
    return {{"recorded", true}};
  }

  double clock_open() override {
    calls.emplace_back("clock:open");
    return clock ? 32 : 0;
  }
  void clock_begin(cudaStream_t /*s*/) override { calls.emplace_back("clock:begin"); }
  void clock_end(cudaStream_t /*s*/) override { calls.emplace_back("clock:end"); }
  std::optional<sm_clock_sample> clock_read() override {
    calls.emplace_back("clock:read");
    return sm_clock_sample{1980.0 * 100, 1e5}; // 1980 MHz over 100 us
  }

  [[nodiscard]] long count(const std::string& word) const {
    return std::count(calls.begin(), calls.end(), word);
  }

private:
  int blocks_ = 0;
  bool timed_out_ = false;
};

measure_options three_samples() {
  measure_options o;
  o.warmup = 0;
  o.min_samples = 3;
  o.max_samples = 3;
  o.min_time = 0;
  o.max_noise = 0; // never converges on noise: exactly max_samples samples
  return o;
}

} // namespace

TEST_CASE("sampler_frame: pre-run, then the gate and telemetry, then flushed held samples",
          "[measure][frame]") {
  recording_device dev;
  sampler_frame frame(dev, nullptr, l2_flush_mode::read, sampler_steps{});
  CHECK(frame.cold());
  CHECK(frame.holding());
  frame.preload([&](cudaStream_t) { dev.calls.emplace_back("body"); });
  const auto outcome = frame.sample("kernel", three_samples(), [&] {
    frame.enqueue([&] { dev.calls.emplace_back("body"); }); // the frame flushes first
    return 1e-3;
  });
  measurement m;
  m.name = "kernel";
  frame.finish(m);
  CHECK(outcome.samples.size() == 3);
  const std::vector<std::string> sample = {"block", "flush:read", "body", "release", "sync"};
  std::vector<std::string> expected = {"clock:open", "flush:read",  "body",
                                       "sync",       "gate:kernel", "telemetry:start"};
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), sample.begin(), sample.end());
  expected.emplace_back("telemetry:stop");
  CHECK(dev.calls == expected);
  CHECK(m.telemetry == nlohmann::json{{"recorded", true}});
}

TEST_CASE("sampler_frame: every strategy passes the gate once, measured or not",
          "[measure][frame]") {
  SECTION("started twice: one gate") {
    recording_device dev;
    sampler_frame frame(dev, nullptr, l2_flush_mode::none, sampler_steps{});
    frame.start("kernel (energy)");
    frame.start("kernel (energy)");
    frame.finish("kernel (energy)");
    CHECK(dev.count("gate:kernel (energy)") == 1);
  }
  SECTION("nothing measured (energy unsupported on this GPU): finish passes it") {
    recording_device dev;
    sampler_steps steps;
    steps.telemetry = false;
    steps.clock = false;
    sampler_frame frame(dev, nullptr, l2_flush_mode::none, steps);
    CHECK_FALSE(frame.started());
    frame.finish("kernel (energy)");
    CHECK(dev.calls == std::vector<std::string>{"gate:kernel (energy)"});
  }
}

TEST_CASE("sampler_frame: the steps a strategy leaves out are not taken", "[measure][frame]") {
  recording_device dev;
  sampler_steps steps;
  steps.flush = false;
  steps.hold = false;
  steps.telemetry = false;
  steps.clock = false;
  sampler_frame frame(dev, nullptr, l2_flush_mode::write, steps);
  CHECK_FALSE(frame.cold());
  CHECK(frame.flush_mode() == l2_flush_mode::none);
  CHECK_FALSE(frame.holding());
  frame.preload([&](cudaStream_t) { dev.calls.emplace_back("body"); });
  CHECK(frame.enqueue([&] { dev.calls.emplace_back("body"); }));
  measurement m;
  m.name = "batch";
  m.telemetry = {{"kept", true}};
  frame.finish(m);
  CHECK(dev.calls == std::vector<std::string>{"body", "sync", "body", "sync", "gate:batch"});
  CHECK(m.telemetry == nlohmann::json{{"kept", true}}); // no scope: the row's own is untouched
}

TEST_CASE("sampler_frame: a frame without a telemetry source records none", "[measure][frame]") {
  recording_device dev;
  dev.telemetry = false;
  sampler_frame frame(dev, nullptr, l2_flush_mode::none, sampler_steps{});
  frame.start("kernel");
  measurement m;
  m.name = "kernel";
  frame.finish(m);
  CHECK(dev.count("telemetry:start") == 0);
  CHECK(dev.count("telemetry:stop") == 0);
  CHECK(m.telemetry.empty());
}

TEST_CASE("sampler_frame: a blocker that times out ends holding", "[measure][frame]") {
  reset_launch_free_timing();
  const auto body = [] {};
  SECTION("for this measurement only") {
    recording_device dev;
    dev.time_out_at = 2;
    sampler_frame frame(dev, nullptr, l2_flush_mode::none, sampler_steps{});
    CHECK(frame.enqueue(body));
    CHECK_FALSE(frame.enqueue(body)); // the sample is invalid
    CHECK_FALSE(frame.holding());
    CHECK(frame.enqueue(body)); // enqueued without the blocker now
    CHECK(dev.count("block") == 2);
    CHECK(launch_free_timing_usable());
  }
  SECTION("for the process when the strategy says so") {
    recording_device dev;
    dev.time_out_at = 1;
    sampler_steps steps;
    steps.hold_loss_is_process_wide = true;
    sampler_frame frame(dev, nullptr, l2_flush_mode::none, steps);
    CHECK_FALSE(frame.enqueue(body));
    CHECK_FALSE(launch_free_timing_usable());
    recording_device later;
    const sampler_frame next(later, nullptr, l2_flush_mode::none, sampler_steps{});
    CHECK_FALSE(next.holding()); // later measurements start without a blocker
  }
  reset_launch_free_timing();
}

TEST_CASE("sampler_frame: an enqueue that throws still releases the blocker", "[measure][frame]") {
  recording_device dev;
  sampler_frame frame(dev, nullptr, l2_flush_mode::none, sampler_steps{});
  CHECK_THROWS_AS(frame.enqueue([] { throw std::runtime_error("launch failed"); }),
                  std::runtime_error);
  CHECK(dev.calls == std::vector<std::string>{"clock:open", "block", "release"});
}

TEST_CASE("sampler_frame: the clock probes bracket a sample's timed work, after the flush",
          "[measure][frame]") {
  recording_device dev;
  dev.clock = true;
  sampler_frame frame(dev, nullptr, l2_flush_mode::read, sampler_steps{});
  CHECK(frame.enqueue([&] { dev.calls.emplace_back("body"); }));
  CHECK(dev.calls == std::vector<std::string>{"clock:open", "block", "flush:read", "clock:begin",
                                              "body", "clock:end", "release", "sync",
                                              "clock:read"});
  SECTION("the sample's clock becomes the measurement's") {
    auto o = three_samples();
    const auto out = frame.sample("kernel", o, [&] {
      frame.enqueue([] {});
      return 1e-3;
    });
    measurement m;
    m.name = "kernel";
    frame.finish(m);
    CHECK(out.samples.size() == 3);
    CHECK(m.sm_clock.at("median_mhz") == Approx(1980));
    CHECK(m.sm_clock.at("samples") == 3);
  }
}

TEST_CASE("sampler_frame: a strategy that throws closes the telemetry scope", "[measure][frame]") {
  recording_device dev;
  {
    sampler_frame frame(dev, nullptr, l2_flush_mode::none, sampler_steps{});
    frame.start("kernel");
  }
  CHECK(dev.calls ==
        std::vector<std::string>{"clock:open", "gate:kernel", "telemetry:start", "telemetry:stop"});
}
