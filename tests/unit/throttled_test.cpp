// The SM clock of every GPU sample and --reject-throttled (lib/src/engine/throttled.cpp, applied
// by the sampler frame as samples are taken). A fake frame device stands for the GPU's clock
// probes: it gives each enqueue the clock the test chooses, and a fake telemetry source gives
// NVML's stamped readings for the second opinion.
#include "gpubench/engine/sampler_frame.hpp"
#include "gpubench/engine/throttled.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <thread>

using namespace gpubench;
using nlohmann::json;

namespace {

constexpr double resolution_ns = 32;

/// A device whose clock probes read `mhz_of(i)` over a window of `window_ns` for its i-th
/// enqueue (0 MHz: no reading), and whose telemetry reads `nvml_mhz_of(i)` inside that enqueue.
class clock_device final : public frame_device {
public:
  std::function<double(int)> mhz_of = [](int) { return 1980.0; };
  std::function<unsigned(int)> nvml_mhz_of = [](int) { return 0U; };
  double window_ns = 1e5;
  bool telemetry = true;
  bool nvml_available = true;
  std::vector<gpu_reading> taken;

  void flush(l2_flush_mode /*mode*/, cudaStream_t /*s*/) override {}
  void block(cudaStream_t /*s*/) override {}
  void release() noexcept override {}
  [[nodiscard]] bool timed_out() const noexcept override { return false; }
  void synchronize(cudaStream_t /*s*/) override {}
  void start_gate(std::string_view /*name*/, cudaStream_t /*s*/) override {}
  [[nodiscard]] bool has_telemetry() const noexcept override { return telemetry; }
  void telemetry_start() override {}
  json telemetry_stop() override {
    return nvml_available ? json{{"available", true}}
                          : json{{"available", false}, {"reason", "no NVML here"}};
  }
  std::vector<gpu_reading> telemetry_readings() override { return taken; }
  double clock_open() override { return resolution_ns; }
  void clock_begin(cudaStream_t /*s*/) override {
    if (const unsigned mhz = nvml_mhz_of(enqueued_); mhz > 0) {
      gpu_reading r;
      r.sm_clock_mhz = mhz;
      r.at = std::chrono::steady_clock::now();
      taken.push_back(r);
    }
  }
  void clock_end(cudaStream_t /*s*/) override { ++enqueued_; }
  std::optional<sm_clock_sample> clock_read() override {
    const double mhz = mhz_of(enqueued_ - 1);
    if (mhz <= 0) return std::nullopt;
    return sm_clock_sample{mhz * window_ns / 1e3, window_ns};
  }

private:
  int enqueued_ = 0;
};

/// Samples through a frame over `dev`: enqueue i returns `value_of(i)` seconds.
sampling_outcome sample_with(clock_device& dev, const measure_options& o,
                             const std::function<double(int)>& value_of, measurement& m) {
  sampler_frame frame(dev, nullptr, l2_flush_mode::none, sampler_steps{});
  int i = 0;
  auto out = frame.sample("kernel", o, [&] {
    frame.enqueue([] {});
    return value_of(i++);
  });
  m.name = "kernel";
  frame.finish(m);
  return out;
}

measure_options converging(double fraction) {
  auto o = test::loop_options(10, 100);
  o.max_noise = 1; // constant samples converge as soon as --min-samples hold
  o.reject_throttled = fraction;
  return o;
}

} // namespace

TEST_CASE("reject-throttled: a throttled sample is discarded before the stopping rule sees it",
          "[throttled]") {
  // Every third sample runs at half the clock and takes twice as long: were one kept, the kept
  // samples would not all be 1 ms, and the rule would not have converged at ten.
  clock_device dev;
  dev.mhz_of = [](int i) { return i % 3 == 2 ? 990.0 : 1980.0; };
  measurement m;
  const auto out = sample_with(
      dev, converging(0.95), [](int i) { return i % 3 == 2 ? 2e-3 : 1e-3; }, m);
  CHECK(out.samples == std::vector<double>(10, 1e-3)); // --min-samples met on kept samples
  CHECK(out.converged);
  CHECK(out.discarded == std::vector<double>(4, 2e-3)); // samples 2, 5, 8 and 11 of 14 taken
  CHECK(out.stopping.at("rule") == "stable");
  CHECK(out.throttled.at("applied") == true);
  CHECK(out.throttled.at("clock") == "gpu");
  CHECK(out.throttled.at("rejected") == 4);
  CHECK(out.throttled.at("kept") == 10);
  CHECK(out.throttled.at("with_reading") == 14);
  CHECK(out.throttled.at("median_sm_clock_mhz") == 1980.0);
  CHECK(m.sm_clock.at("median_mhz") == 1980.0); // the kept samples' clock
  CHECK(m.sm_clock.at("min_mhz") == 1980.0);
  CHECK(m.sm_clock.at("samples") == 10);
  CHECK(m.sm_clock.at("resolution_ns") == resolution_ns);
}

TEST_CASE("reject-throttled: off, every sample is kept and its clock recorded", "[throttled]") {
  clock_device dev;
  dev.mhz_of = [](int i) { return i % 3 == 2 ? 990.0 : 1980.0; };
  measurement m;
  auto o = converging(0);
  o.max_noise = 1e-9; // never converges on distinct samples: exactly 12
  o.max_samples = 12;
  const auto out = sample_with(
      dev, o, [](int i) { return 1e-3 * (1 + i); }, m);
  CHECK(out.samples.size() == 12);
  CHECK(out.discarded.empty());
  CHECK(out.throttled.empty());
  CHECK(m.sm_clock.at("samples") == 12);
  CHECK(m.sm_clock.at("median_mhz") == 1980.0);
  CHECK(m.sm_clock.at("min_mhz") == 990.0);
  CHECK(m.sm_clock.at("unresolved") == 0);
}

TEST_CASE("reject-throttled: a window too short for the timer is neither judged nor recorded",
          "[throttled]") {
  clock_device dev;
  dev.mhz_of = [](int i) { return i % 3 == 2 ? 990.0 : 1980.0; };
  dev.window_ns = (clock_min_timer_steps - 1) * resolution_ns;
  measurement m;
  const auto out = sample_with(
      dev, converging(0.95), [](int) { return 1e-3; }, m);
  CHECK(out.samples.size() == 10);
  CHECK(out.throttled.at("rejected") == 0);
  CHECK(out.throttled.at("applied") == false);
  CHECK(out.throttled.at("reason").get<std::string>().find("long enough") != std::string::npos);
  CHECK(m.sm_clock.at("samples") == 0);
  CHECK(m.sm_clock.at("unresolved") == 10);
  CHECK_FALSE(m.sm_clock.contains("median_mhz"));
}

TEST_CASE("reject-throttled: when every sample is discarded the measurement keeps them",
          "[throttled]") {
  // Three warm-ups at full clock use up the 50 ms budget; every sample after runs at half the
  // clock, below 0.95 of the running median until half the clocks seen are low.
  clock_device dev;
  dev.mhz_of = [](int i) { return i < 3 ? 2000.0 : 1000.0; };
  auto o = converging(0.95);
  o.warmup = 5;
  o.timeout = 0.05;
  measurement m;
  const auto out = sample_with(
      dev, o,
      [](int i) {
        if (i < 3) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return 1e-3;
      },
      m);
  CHECK(out.samples.size() == 3);
  CHECK(out.discarded.empty());
  CHECK_FALSE(out.converged);
  CHECK(out.throttled.at("rejected") == 0);
  CHECK(out.throttled.at("reason") == "every sample was throttled: none dropped");
}

TEST_CASE("reject-throttled: NVML's opinion is recorded beside and drops nothing", "[throttled]") {
  SECTION("NVML reads low inside samples the GPU counted at full clock") {
    clock_device dev;
    dev.nvml_mhz_of = [](int i) { return i == 4 ? 1500U : 1980U; };
    measurement m;
    const auto out = sample_with(
        dev, converging(0.95), [](int) { return 1e-3; }, m);
    CHECK(out.samples.size() == 10);
    CHECK(out.throttled.at("rejected") == 0);
    const auto& nvml = out.throttled.at("nvml");
    CHECK(nvml.at("median_sm_clock_mhz") == 1980.0);
    CHECK(nvml.at("with_reading") == 10);
    CHECK(nvml.at("below_fraction") == 1);
    CHECK(m.telemetry == json{{"available", true}}); // the scope closed early, kept by finish()
  }
  SECTION("no NVML: said in the record, the GPU's clock still judges") {
    clock_device dev;
    dev.nvml_available = false;
    dev.mhz_of = [](int i) { return i % 3 == 2 ? 990.0 : 1980.0; };
    measurement m;
    const auto out = sample_with(
        dev, converging(0.95), [](int) { return 1e-3; }, m);
    CHECK(out.throttled.at("rejected") == 4);
    CHECK(out.throttled.at("nvml").at("reason") == "no NVML here");
    CHECK(m.telemetry.at("available") == false);
  }
  SECTION("no telemetry source: no opinion") {
    clock_device dev;
    dev.telemetry = false;
    measurement m;
    const auto out = sample_with(
        dev, converging(0.95), [](int) { return 1e-3; }, m);
    CHECK_FALSE(out.throttled.contains("nvml"));
    CHECK(out.throttled.at("applied") == true);
  }
}

TEST_CASE("nvml_throttle_opinion: the lowest reading inside each window against the median",
          "[throttled]") {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto ms = [&](int n) { return t0 + std::chrono::milliseconds(n); };
  const std::vector<sample_window> windows{
      {ms(0), ms(1)}, {ms(2), ms(3)}, {ms(5), ms(6)}, {ms(9), ms(11)}};
  std::vector<gpu_reading> readings(6);
  const int at_ms[] = {-5, 0, 2, 3, 10, 20};
  const unsigned mhz[] = {1980, 1000, 1980, 1500, 1980, 1980};
  for (int i = 0; i < 6; ++i) {
    readings[i].sm_clock_mhz = mhz[i];
    readings[i].at = ms(at_ms[i]);
  }
  const auto opinion = nvml_throttle_opinion(windows, readings, 0.95);
  CHECK(opinion.at("median_sm_clock_mhz") == 1980.0);
  CHECK(opinion.at("with_reading") == 3);   // the window at 5-6 ms has none
  CHECK(opinion.at("below_fraction") == 2); // 1000 in the first, 1500 (the lowest) in the second
  CHECK(nvml_throttle_opinion(windows, {}, 0.95).at("reason") == "no SM clock reading");
}
