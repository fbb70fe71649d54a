// The stopping rules and --reject-throttled on a real GPU: a small vecadd converges under the
// entropy rule, and a measurement under --reject-throttled records what it checked and dropped.
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/engine/measure.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <catch2/catch.hpp>

#include <functional>

using namespace gpubench;

namespace {
/// A 1Mi f32 vecadd, flushed before each sample.
struct small_vecadd {
  static constexpr std::size_t n = std::size_t{1} << 20;
  cuda::device_info info = cuda::query_device(0);
  cuda::device_buffer<float> a{n}, b{n}, c{n};
  cuda::stream s;
  cuda::l2_flusher flusher{info.l2_bytes};
  work_counts work{12.0 * n, double(n), "elements"};
  std::function<void(cudaStream_t)> kernel = [this](cudaStream_t st) {
    cuda::vecadd_launch cfg;
    cfg.type = dtype::f32;
    cuda::launch_vecadd(cfg, a.data(), b.data(), c.data(), n, st);
  };
  small_vecadd() {
    GPUBENCH_CUDA_TRY(cudaMemset(a.data(), 0, n * 4));
    GPUBENCH_CUDA_TRY(cudaMemset(b.data(), 0, n * 4));
    GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  }
};
} // namespace

TEST_CASE("entropy stopping: a small vecadd converges", "[gpu][stopping]") {
  small_vecadd v;
  gpu_sampler sampler(v.s.get(), &v.flusher);
  measure_options o;
  o.stopping = stopping_rule::entropy;
  o.max_samples = 100000;
  o.timeout = 20;
  const auto m = sampler.run("kernel", o, v.work, v.kernel);
  INFO(m.stopping.dump() << " after " << m.samples.size() << " samples");
  CHECK(m.stopping.at("rule") == "entropy");
  CHECK(m.converged);
  CHECK(m.stopped == stop_reason::entropy);
  CHECK(m.samples.size() >= static_cast<std::size_t>(o.min_samples));
  CHECK(m.stopping.at("angle_deg").get<double>() <= o.entropy_max_angle);
  CHECK(m.stopping.at("r2").get<double>() >= o.entropy_min_r2);
}

TEST_CASE("reject-throttled: a GPU measurement records what it checked and dropped",
          "[gpu][stopping]") {
  small_vecadd v;
  auto tel = open_telemetry(v.info.pci_bus_id);
  gpu_sampler sampler(v.s.get(), &v.flusher, tel.get());
  measure_options o;
  o.reject_throttled = 0.95;
  o.min_samples = 200;
  o.max_samples = 2000;
  o.min_time = 0.2; // about 20 telemetry readings
  o.timeout = 5;
  const auto m = sampler.run("kernel", o, v.work, v.kernel);
  INFO(m.throttled.dump());
  REQUIRE_FALSE(m.throttled.empty());
  CHECK(m.throttled.at("fraction") == 0.95);
  CHECK_FALSE(m.telemetry.empty()); // the scope closed after the samples, and was kept
  if (tel->monitor() == nullptr) {
    WARN("NVML unavailable: " << tel->unavailable_reason());
    CHECK(m.throttled.at("applied") == false);
    CHECK(m.throttled.at("rejected") == 0);
    return;
  }
  REQUIRE(m.throttled.at("applied") == true);
  const auto kept = m.throttled.at("kept").get<std::size_t>();
  const auto rejected = m.throttled.at("rejected").get<std::size_t>();
  CHECK(kept == m.samples.size());
  CHECK(m.throttled.at("with_reading").get<std::size_t>() <= kept + rejected);
  CHECK(m.throttled.at("median_sm_clock_mhz").get<double>() > 0);
  CHECK(m.stats.count == m.samples.size());
}
