// --reject-throttled (lib/src/engine/throttled.cpp, applied by the sampler frame): a GPU sample
// during which the SM clock fell below a fraction of the measurement's median is dropped and
// counted. A fake telemetry source feeds stamped clock readings inside chosen samples' windows.
#include "gpubench/engine/sampler_frame.hpp"
#include "gpubench/engine/throttled.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <chrono>

using namespace gpubench;
using nlohmann::json;

namespace {

/// Telemetry whose SM clock readings the test takes, each stamped when taken.
class fake_clock_source final : public telemetry_source {
public:
  bool available = true;
  std::vector<gpu_reading> taken;
  void start() override { read_now(1980); } // one reading before the first sample
  json stop() override {
    return available ? json{{"available", true}}
                     : json{{"available", false}, {"reason", "no NVML here"}};
  }
  gpu_monitor* monitor() noexcept override { return nullptr; }
  [[nodiscard]] std::string unavailable_reason() const override {
    return available ? "" : "no NVML here";
  }
  [[nodiscard]] std::vector<gpu_reading> readings() const override {
    return available ? taken : std::vector<gpu_reading>{};
  }
  void read_now(unsigned mhz) {
    gpu_reading r;
    r.sm_clock_mhz = mhz;
    r.at = std::chrono::steady_clock::now();
    taken.push_back(r);
  }
};

measure_options ten_samples(double fraction) {
  auto o = test::loop_options(10, 10);
  o.warmup = 2;
  o.max_noise = 1e-9; // never converges: exactly 10 samples
  o.reject_throttled = fraction;
  return o;
}

/// Ten samples valued 1..10 after two warm-ups (valued 100), through a frame over `source`;
/// `clock_of(i)` is the SM clock read inside sample i (0: no reading), i = -2, -1 for warm-ups.
sampling_outcome sample_ten(fake_clock_source& source, double fraction,
                            const std::function<unsigned(int)>& clock_of, measurement& m) {
  auto dev = make_cuda_frame_device(nullptr, &source);
  sampler_frame frame(*dev, nullptr, l2_flush_mode::none, sampler_steps{});
  int i = -2;
  auto out = frame.sample("kernel", ten_samples(fraction), [&] {
    if (const unsigned mhz = clock_of(i); mhz > 0) source.read_now(mhz);
    const int index = i++;
    return index < 0 ? 100.0 : index + 1.0;
  });
  m.name = "kernel";
  frame.finish(m);
  return out;
}

} // namespace

TEST_CASE("reject-throttled: samples with a low clock in their window are dropped and counted",
          "[throttled]") {
  fake_clock_source source;
  measurement m;
  // Warm-ups read low too: they are not samples, so nothing of theirs is dropped or counted.
  const auto out = sample_ten(
      source, 0.95,
      [](int i) -> unsigned {
        if (i < 0 || i == 3 || i == 7) return 1500; // below 0.95 x 1980
        if (i == 5) return 1900;                    // above 1881: kept
        return i % 2 == 0 ? 1980 : 0;               // odd samples have no reading: kept
      },
      m);
  CHECK(out.samples == std::vector<double>{1, 2, 3, 5, 6, 7, 9, 10});
  CHECK(out.throttled.at("applied") == true);
  CHECK(out.throttled.at("rejected") == 2);
  CHECK(out.throttled.at("kept") == 8);
  CHECK(out.throttled.at("fraction") == 0.95);
  CHECK(out.throttled.at("median_sm_clock_mhz") == 1980.0);
  CHECK(out.throttled.at("with_reading") == 8);    // samples 0, 2, 3, 4, 5, 6, 7 and 8
  CHECK(m.telemetry == json{{"available", true}}); // the scope closed early, kept by finish()
}

TEST_CASE("reject-throttled: nothing is dropped without readings or without telemetry",
          "[throttled]") {
  SECTION("no reading in any sample") {
    fake_clock_source source;
    measurement m;
    const auto out = sample_ten(
        source, 0.95, [](int) { return 0U; }, m);
    CHECK(out.samples.size() == 10);
    CHECK(out.throttled.at("rejected") == 0);
    CHECK(out.throttled.at("with_reading") == 0);
  }
  SECTION("no telemetry (no NVML): said, nothing dropped") {
    fake_clock_source source;
    source.available = false;
    measurement m;
    const auto out = sample_ten(
        source, 0.95, [](int) { return 1000U; }, m);
    CHECK(out.samples.size() == 10);
    CHECK(out.throttled.at("applied") == false);
    CHECK(out.throttled.at("rejected") == 0);
    CHECK(out.throttled.at("reason").get<std::string>().find("no NVML here") != std::string::npos);
    CHECK(m.telemetry.at("available") == false);
  }
  SECTION("off: no record, the telemetry scope closes in finish()") {
    fake_clock_source source;
    measurement m;
    const auto out = sample_ten(
        source, 0, [](int) { return 1000U; }, m);
    CHECK(out.samples.size() == 10);
    CHECK(out.throttled.empty());
    CHECK(m.telemetry == json{{"available", true}});
  }
}

TEST_CASE("reject-throttled: when every sample is throttled none is dropped", "[throttled]") {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::vector<double> samples{1, 2};
  const std::vector<sample_window> windows{
      {t0, t0 + std::chrono::milliseconds(1)},
      {t0 + std::chrono::milliseconds(2), t0 + std::chrono::milliseconds(3)}};
  std::vector<gpu_reading> readings(5);
  const int at_ms[] = {-5, 0, 2, 10, 20};
  const unsigned mhz[] = {1980, 1000, 1000, 1980, 1980};
  for (int i = 0; i < 5; ++i) {
    readings[i].sm_clock_mhz = mhz[i];
    readings[i].at = t0 + std::chrono::milliseconds(at_ms[i]);
  }
  const auto record = reject_throttled_samples(samples, windows, readings, 0.95);
  CHECK(samples.size() == 2);
  CHECK(record.at("rejected") == 0);
  CHECK(record.at("with_reading") == 2);
  CHECK(record.contains("reason"));
  // The same with a third, unthrottled sample: the two are dropped.
  samples = {1, 2, 3};
  auto three = windows;
  three.push_back({t0 + std::chrono::milliseconds(9), t0 + std::chrono::milliseconds(11)});
  const auto dropped = reject_throttled_samples(samples, three, readings, 0.95);
  CHECK(samples == std::vector<double>{3});
  CHECK(dropped.at("rejected") == 2);
  CHECK(dropped.at("median_sm_clock_mhz") == 1980.0);
}
