// Energy per operation: window sizing, the interval, the power integral and its cross-check.
#include "gpubench/telemetry/energy.hpp"

#include "gpubench/engine/energy_sampler.hpp"
#include "gpubench/engine/sampler_frame.hpp"

#include <catch2/catch.hpp>

#include "common.hpp"

#include <random>

using namespace gpubench;

namespace {
using gpubench::test::fresh_seed;
} // namespace

TEST_CASE("energy: a window spans max(10 counter steps, 1 s)", "[energy]") {
  const energy_options o;
  CHECK(energy_window_seconds(0.1, o) == Approx(1.0));  // H200: 10 steps of 100 ms = 1 s
  CHECK(energy_window_seconds(0.02, o) == Approx(1.0)); // a fast counter: the 1 s floor
  CHECK(energy_window_seconds(0.25, o) == Approx(2.5)); // a slow counter: ten of its steps
  energy_options longer;
  longer.min_window_s = 3;
  CHECK(energy_window_seconds(0.1, longer) == Approx(3.0));
}

TEST_CASE("energy: the counter step is the median time between changes", "[energy]") {
  std::vector<std::pair<double, std::uint64_t>> r;
  // Polled every millisecond; the counter moves at 0.03, 0.13, 0.23, 0.33 and (late) 0.45 s.
  std::uint64_t e = 1000;
  for (int ms = 0; ms <= 500; ++ms) {
    if (ms == 30 || ms == 130 || ms == 230 || ms == 330 || ms == 450) e += 7000;
    r.emplace_back(ms * 1e-3, e);
  }
  CHECK(estimate_tick(r) == Approx(0.1));
  CHECK(estimate_tick({{0.0, 5}, {0.5, 5}, {1.0, 5}}) == 0); // never moved
}

TEST_CASE("energy: the step watcher sleeps until shortly before the next step is due", "[energy]") {
  // A step seen at 10.0 s, steps every 0.1 s, a 15 ms margin: the next read is due at 10.085 s.
  CHECK(watcher_sleep_s(10.0, 10.0, 0.1, 0.015) == Approx(0.085));
  CHECK(watcher_sleep_s(10.05, 10.0, 0.1, 0.015) == Approx(0.035));
  // Inside the margin, or past the due time: read back to back.
  CHECK(watcher_sleep_s(10.09, 10.0, 0.1, 0.015) == 0);
  CHECK(watcher_sleep_s(10.3, 10.0, 0.1, 0.015) == 0);
  // No step seen yet, or no tick known: never sleep, so no step is missed.
  CHECK(watcher_sleep_s(10.0, -1, 0.1, 0.015) == 0);
  CHECK(watcher_sleep_s(10.0, 10.0, 0, 0.015) == 0);
  // A margin grown to the whole tick never sleeps.
  CHECK(watcher_sleep_s(10.0, 10.0, 0.1, 0.1) == 0);
  CHECK(watcher_margin_ticks > 0);
  CHECK(watcher_margin_ticks < 0.5);
}

TEST_CASE("energy: the 95% interval uses Student's t", "[energy]") {
  const std::vector<double> v{10, 12, 11, 13, 9};
  const auto i = mean_interval95(v);
  CHECK(i.mean == Approx(11));
  const double sd = std::sqrt(2.5);
  CHECK(i.cv == Approx(sd / 11));
  CHECK(i.half_width == Approx(2.776 * sd / std::sqrt(5.0)));
  CHECK(student_t95(1) == Approx(12.706));
  CHECK(student_t95(1000) == Approx(1.96));
  CHECK(mean_interval95(std::vector<double>{4}).half_width == 0);
}

TEST_CASE("energy: instant power integrates to the energy of a known profile", "[energy]") {
  INFO("seed " << fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> watts(100, 700);
  const double p = watts(rng);
  // A constant power sampled at 10 Hz: exactly p x t, wherever the window starts.
  std::vector<std::pair<double, double>> samples;
  for (int i = 0; i <= 30; ++i) samples.emplace_back(0.1 * i, p);
  std::uniform_real_distribution<double> start(0, 1.5);
  const double t0 = start(rng);
  CHECK(integrate_power(samples, t0, t0 + 1.2) == Approx(p * 1.2));
  // A ramp from 0 to 300 W over 3 s: 450 J, and the trapezoid is exact for a straight line.
  std::vector<std::pair<double, double>> ramp;
  for (int i = 0; i <= 30; ++i) ramp.emplace_back(0.1 * i, 100.0 * 0.1 * i);
  CHECK(integrate_power(ramp, 0, 3) == Approx(450));
  CHECK(integrate_power(ramp, 1.05, 2.05) == Approx(100.0 * (2.05 * 2.05 - 1.05 * 1.05) / 2));
  CHECK(integrate_power({}, 0, 1) == 0);
}

TEST_CASE("energy: counter and integral are compared, and above 5% the row says so", "[energy]") {
  CHECK(counter_disagreement(100, 97) == Approx(0.03));
  CHECK(counter_disagreement(0, 5) == 1);
  std::vector<energy_window> w;
  for (int i = 0; i < 5; ++i) w.push_back({1.0, 500.0 + i, 480.0, 1e9});
  const energy_options o;
  const auto agree = summarize_energy(w, 80, 0.1, 1.0, "element", 12, o);
  CHECK(agree["supported"] == true);
  CHECK(agree["counter_vs_integral"].get<double>() == Approx((2510.0 - 2400.0) / 2510.0));
  CHECK(agree["disagreement_flag"] == false);
  for (auto& x : w) x.integral_j = 400;
  const auto disagree = summarize_energy(w, 80, 0.1, 1.0, "element", 12, o);
  CHECK(disagree["disagreement_flag"] == true);
  CHECK(energy_line(disagree).find("DISAGREE") != std::string::npos);
}

TEST_CASE("energy: the line says how busy the GPU was, and when it waited on the host",
          "[energy]") {
  std::vector<energy_window> w(5, energy_window{1.0, 500.0, 500.0, 1e9});
  auto e = summarize_energy(w, 100, 0.1, 1.0, "element", 12, energy_options{});
  CHECK(energy_line(e).find("GPU busy") == std::string::npos); // not measured: not claimed
  e["busy_fraction"] = 0.98;
  e["host_bound"] = false;
  CHECK(energy_line(e).find("GPU busy 98%") != std::string::npos);
  CHECK(energy_line(e).find("HOST-BOUND") == std::string::npos);
  e["busy_fraction"] = 0.22;
  e["host_bound"] = true;
  CHECK(energy_line(e).find("GPU busy 22% (HOST-BOUND") != std::string::npos);
  e["busy_fraction"] = 0.96;
  e["busy_fraction_min"] = 0.81;
  CHECK(energy_line(e).find("GPU busy 96% (lowest window 81%; HOST-BOUND") != std::string::npos);
  // A body that waits inside its launches has no busy fraction, and is still said host-bound.
  e.erase("busy_fraction");
  e.erase("busy_fraction_min");
  e["busy_unmeasured"] = "a chunk took 450 ms to enqueue behind a 250 ms hold: ...";
  const auto waits = energy_line(e);
  CHECK(waits.find("GPU busy") == std::string::npos);
  CHECK(waits.find("HOST-BOUND: the body waits inside its launches") != std::string::npos);
  e["host_bound"] = false;
  CHECK(energy_line(e).find("HOST-BOUND") == std::string::npos);
}

TEST_CASE("energy: the busy fraction is each window's launches x the launch-free GPU time",
          "[energy]") {
  // 1 s windows of a body that does 20 ops a launch and runs 100 us on the GPU: 10000 launches
  // (200000 ops) in a window keep the GPU busy the whole second; 7000 launches leave it idle 30%.
  std::vector<energy_window> w(3, energy_window{1.0, 300.0, 300.0, 200000});
  auto b = busy_fractions(w, 20, 100e-6);
  CHECK(b.overall == Approx(1.0));
  CHECK(b.lowest == Approx(1.0));
  w[1].ops = 140000;
  b = busy_fractions(w, 20, 100e-6);
  CHECK(b.overall == Approx(0.9));
  CHECK(b.lowest == Approx(0.7));
  // One slow window is enough: the row is only as GPU-bound as its least busy window.
  CHECK(b.lowest < host_bound_busy);
  w[1].seconds = 2.0; // windows of different lengths weigh by their time
  w[1].ops = 400000;
  b = busy_fractions(w, 20, 100e-6);
  CHECK(b.overall == Approx(1.0));
  // No launch-free time, no ops per launch: nothing measured, nothing claimed.
  CHECK(busy_fractions(w, 20, 0).overall == 0);
  CHECK(busy_fractions(w, 0, 100e-6).overall == 0);
  CHECK(busy_fractions({}, 20, 100e-6).overall == 0);
}

TEST_CASE("energy: per-op figures gross and net of idle, with CV and interval", "[energy]") {
  // Five 1 s windows at 500 W doing 1e9 elements each, idle 100 W.
  std::vector<energy_window> w(5, energy_window{1.0, 500.0, 500.0, 1e9});
  const auto e = summarize_energy(w, 100, 0.1, 1.0, "element", 12, energy_options{});
  CHECK(e["windows"] == 5);
  CHECK(e["j_per_op"].get<double>() == Approx(5e-7));
  CHECK(e["j_per_op_net"].get<double>() == Approx(4e-7));
  CHECK(e["mean_w"].get<double>() == Approx(500));
  CHECK(e["cv"].get<double>() == 0);
  CHECK(e["ops_per_j"].get<double>() == Approx(2e6));
  CHECK(e["bytes_per_j"].get<double>() == Approx(12 / 5e-7)); // GB/s per W = bytes per nJ
  CHECK(e["ops_per_s"].get<double>() == Approx(1e9));
}

TEST_CASE("energy: no counter is never a silent 0", "[energy]") {
  // No NVML: unsupported with the reason, before any CUDA call.
  const auto dev = make_cuda_frame_device(nullptr, nullptr);
  sampler_frame frame(*dev, nullptr, l2_flush_mode::none, back_to_back_steps());
  const auto none = measure_gpu_energy(
      nullptr, "cannot load libnvidia-ml.so.1", frame, "kernel (energy)",
      [](cudaStream_t) { FAIL("no work without a counter"); }, 1, "element", 0, {});
  CHECK_FALSE(frame.started()); // the caller passes the gate (phases.cpp)
  CHECK(none["supported"] == false);
  CHECK(none["reason"] == "cannot load libnvidia-ml.so.1");
  CHECK(energy_line(none) == "energy: unsupported (cannot load libnvidia-ml.so.1)");
  CHECK(summarize_energy({}, 0, 0.1, 1, "element", 0, {})["supported"] == false);
}
