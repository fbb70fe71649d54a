// The stopping rules and --reject-throttled on a real GPU: a small vecadd converges under the
// entropy rule, and a measurement under --reject-throttled records what it checked and dropped.
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/engine/measure.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

using namespace gpubench;

namespace {
/// An f32 vecadd (1Mi elements unless told), flushed before each sample.
struct small_vecadd {
  std::size_t n;
  cuda::device_info info = cuda::query_device(0);
  cuda::device_buffer<float> a{n}, b{n}, c{n};
  cuda::stream s;
  cuda::l2_flusher flusher{info.l2_bytes};
  work_counts work{12.0 * static_cast<double>(n), static_cast<double>(n), "elements"};
  std::function<void(cudaStream_t)> kernel = [this](cudaStream_t st) {
    cuda::vecadd_launch cfg;
    cfg.type = dtype::f32;
    cuda::launch_vecadd(cfg, a.data(), b.data(), c.data(), n, st);
  };
  explicit small_vecadd(std::size_t elements = std::size_t{1} << 20) : n(elements) {
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

TEST_CASE("reject-throttled: each sample's SM clock, counted on the GPU, agrees with NVML's",
          "[gpu][stopping]") {
  // 3 x 256 MiB: about 0.2 ms a sample, a window 200 times a 1 us timer step.
  small_vecadd v(std::size_t{1} << 26);
  auto tel = open_telemetry(v.info.pci_bus_id);
  gpu_sampler sampler(v.s.get(), &v.flusher, tel.get());
  measure_options o;
  o.reject_throttled = 0.95;
  o.min_samples = 200;
  o.max_samples = 2000;
  o.min_time = 0.2; // about 20 telemetry readings
  o.timeout = 5;
  const auto m = sampler.run("kernel", o, v.work, v.kernel);
  INFO("throttled_samples " << m.throttled.dump() << "\nsm_clock " << m.sm_clock.dump()
                            << "\ntelemetry " << m.telemetry.dump());
  REQUIRE_FALSE(m.sm_clock.empty());
  const double resolution = m.sm_clock.at("resolution_ns").get<double>();
  WARN("%globaltimer resolution on this GPU: " << resolution << " ns; SM clock "
                                               << m.sm_clock.at("median_mhz") << " MHz");
  CHECK(resolution > 0);
  CHECK(m.sm_clock.at("samples") == m.samples.size()); // every window long enough
  CHECK(m.sm_clock.at("unresolved") == 0);
  const double gpu_mhz = m.sm_clock.at("median_mhz").get<double>();
  REQUIRE_FALSE(m.throttled.empty());
  CHECK(m.throttled.at("fraction") == 0.95);
  CHECK(m.throttled.at("applied") == true);
  CHECK(m.throttled.at("kept") == m.samples.size());
  CHECK(m.stats.count == m.samples.size());
  CHECK(m.samples.size() >= 200);   // --min-samples holds on kept samples
  CHECK_FALSE(m.telemetry.empty()); // the scope closed after the samples, and was kept
  if (tel->monitor() == nullptr) {
    WARN("NVML unavailable: " << tel->unavailable_reason());
    CHECK(m.throttled.at("nvml").contains("reason"));
    return;
  }
  const auto& nvml = m.telemetry.at("sm_clock_mhz");
  const double nvml_mhz = nvml.at("median").get<double>();
  CHECK(std::abs(gpu_mhz - nvml_mhz) <= 0.02 * nvml_mhz);
  CHECK(m.throttled.at("nvml").at("median_sm_clock_mhz").get<double>() > 0);
  // An unthrottled GPU (NVML's lowest reading within 5% of its median) rejects nothing.
  if (nvml.at("min").get<double>() >= 0.95 * nvml_mhz) CHECK(m.throttled.at("rejected") == 0);
}
