// Launch-free timing and a real energy read on the GPU: warm samples of an L2-resident vecadd are
// no slower than cold ones once the blocking kernel keeps the launch out of the timed region, a
// blocking kernel that is never released gives up on its own, and NVML's counter gives energy.
#include "gpubench/cuda/blocking_kernel.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/kernel_timestamps.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/engine/energy_sampler.hpp"
#include "gpubench/engine/measure.hpp"
#include "gpubench/engine/sampler_frame.hpp"
#include "gpubench/telemetry/energy.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <optional>

using namespace gpubench;

namespace {
/// A 1Mi f32 vecadd (12 MB of traffic, inside any recent L2) and a sampler with an L2 flusher.
struct l2_vecadd {
  static constexpr std::size_t n = std::size_t{1} << 20;
  cuda::device_info info = cuda::query_device(0);
  cuda::device_buffer<float> a{n}, b{n}, c{n};
  cuda::stream s;
  cuda::l2_flusher flusher{info.l2_bytes};
  gpu_sampler sampler{s.get(), &flusher};
  work_counts work{12.0 * n, double(n), "elements"};
  std::function<void(cudaStream_t)> kernel = [this](cudaStream_t st) {
    cuda::vecadd_launch cfg;
    cfg.type = dtype::f32;
    cuda::launch_vecadd(cfg, a.data(), b.data(), c.data(), n, st);
  };

  l2_vecadd() {
    REQUIRE(3 * n * 4 < static_cast<std::size_t>(info.l2_bytes));
    GPUBENCH_CUDA_TRY(cudaMemset(a.data(), 0, n * 4));
    GPUBENCH_CUDA_TRY(cudaMemset(b.data(), 0, n * 4));
    GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  }
  [[nodiscard]] static measure_options options() {
    measure_options o;
    o.warmup = 5;
    o.min_samples = 50;
    o.timeout = 2;
    return o;
  }
};
} // namespace

TEST_CASE("blocking kernel: an unreleased block times out instead of hanging", "[gpu][timing]") {
  const cuda::stream s;
  cuda::blocking_kernel blocker(0.05);
  const auto t0 = std::chrono::steady_clock::now();
  blocker.block(s.get());
  s.synchronize(); // never released: only the timeout lets this return
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(blocker.timed_out());
  CHECK(waited >= 0.04);
  CHECK(waited < 5);
  blocker.block(s.get());
  blocker.release();
  s.synchronize();
  CHECK_FALSE(blocker.timed_out());
}

TEST_CASE("launch-free timing: warm vecadd in L2 is no slower than cold", "[gpu][timing]") {
  l2_vecadd v;
  auto o = v.options();
  const auto cold = v.sampler.run("kernel", o, v.work, v.kernel);
  o.warm = true;
  const auto warm = v.sampler.run("kernel", o, v.work, v.kernel);
  INFO("cold median " << cold.stats.median << " s, warm median " << warm.stats.median << " s");
  CHECK(cold.timing == gpu_timing::launch_free);
  CHECK(warm.timing == gpu_timing::launch_free);
  CHECK(warm.invalid_samples == 0);
  CHECK(warm.stats.median <= cold.stats.median);

  o.batch_time = 0.005;
  const auto batch = v.sampler.run_batch("kernel (batch)", o, v.work, v.kernel);
  CHECK(batch.timing == gpu_timing::batch);
  CHECK(batch.batch_launches > 1);
  CHECK(batch.stats.median > 0);
}

TEST_CASE("GPU timestamps: a vecadd's span is inside its event time, warm no slower than cold",
          "[gpu][timing]") {
  l2_vecadd v;
  auto o = v.options();
  o.warm = true;
  auto& sampler = v.sampler;
  const auto& work = v.work;
  const auto& kernel = v.kernel;
  const auto events = sampler.run("kernel", o, work, kernel);
  std::string why;
  const auto warm = sampler.run_timestamps("kernel (timestamps)", o, work, kernel, why);
  // The H200 test machine has CUPTI in its toolkit: a missing one fails here rather than skipping.
  INFO("CUPTI: " << why);
  REQUIRE(warm.has_value());
  o.warm = false;
  const auto cold = sampler.run_timestamps("kernel (timestamps)", o, work, kernel, why);
  REQUIRE(cold.has_value());
  INFO("events " << events.stats.median << " s, timestamps warm " << warm->stats.median
                 << " s, cold " << cold->stats.median << " s");
  CHECK(warm->timing == gpu_timing::timestamps);
  CHECK(warm->invalid_samples == 0);
  CHECK(warm->samples.size() >= 50);
  CHECK(warm->stats.median > 0);
  // One kernel: its span leaves out the GPU's launch and retirement that the events hold.
  CHECK(warm->stats.median < events.stats.median);
  CHECK(warm->stats.median <= cold->stats.median);
  CHECK_FALSE(warm->cold);
  CHECK(cold->cold);

  // A body of two kernels: the span runs from the first one's start to the second one's end.
  const auto two = sampler.run_timestamps(
      "two", o, work,
      [&](cudaStream_t st) {
        kernel(st);
        kernel(st);
      },
      why);
  REQUIRE(two.has_value());
  CHECK(two->stats.median > 1.5 * cold->stats.median);

  // One tracer at a time in a process.
  std::string first_why;
  auto first = cuda::kernel_timestamps::open(first_why);
  REQUIRE(first != nullptr);
  std::string second_why;
  CHECK(cuda::kernel_timestamps::open(second_why) == nullptr);
  CHECK(second_why.find("another measurement") != std::string::npos);
}

TEST_CASE("launch-free timing: a body that waits for the GPU falls back, flagged",
          "[gpu][timing]") {
  const cuda::stream s;
  gpu_sampler sampler(s.get(), nullptr);
  measure_options o;
  o.warmup = 0;
  o.min_samples = 3;
  o.max_samples = 3;
  o.min_time = 0;
  o.timeout = 10;
  // Synchronizing inside the body waits for the blocking kernel: the first sample times out.
  const auto m = sampler.run("sync", o, {},
                             [](cudaStream_t st) { GPUBENCH_CUDA_TRY(cudaStreamSynchronize(st)); });
  CHECK(m.invalid_samples == 1);
  CHECK(m.timing == gpu_timing::includes_launch);
  CHECK(m.samples.size() == 3);
  // The process then stops trying (a serializing tool would time out every blocker) until reset.
  CHECK_FALSE(launch_free_timing_usable());
  reset_launch_free_timing();
}

namespace {

/// Energy over 2 windows of a zero-filled f32 vecadd of n elements a launch, the host spinning
/// `host_pause` after each launch, and with `wait_gpu` waiting for the launch to finish; empty
/// (with a warning) without NVML.
std::optional<nlohmann::json> vecadd_energy(std::size_t n, std::chrono::microseconds host_pause,
                                            bool wait_gpu = false) {
  const auto info = cuda::query_device(0);
  auto tel = open_telemetry(info.pci_bus_id);
  if (tel->monitor() == nullptr) {
    WARN("NVML unavailable: " << tel->unavailable_reason());
    return std::nullopt;
  }
  cuda::device_buffer<float> a(n), b(n), c(n);
  GPUBENCH_CUDA_TRY(cudaMemset(a.data(), 0, n * 4));
  GPUBENCH_CUDA_TRY(cudaMemset(b.data(), 0, n * 4));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  const cuda::stream s;
  cuda::vecadd_launch cfg;
  cfg.type = dtype::f32;
  energy_options o;
  o.windows = 2;
  const auto dev = make_cuda_frame_device(nullptr, nullptr);
  sampler_frame frame(*dev, s.get(), l2_flush_mode::none, back_to_back_steps());
  return measure_gpu_energy(
      tel->monitor(), "", frame, "kernel (energy)",
      [&](cudaStream_t st) {
        cuda::launch_vecadd(cfg, a.data(), b.data(), c.data(), n, st);
        if (wait_gpu) GPUBENCH_CUDA_TRY(cudaStreamSynchronize(st));
        const auto until = std::chrono::steady_clock::now() + host_pause;
        while (std::chrono::steady_clock::now() < until) {
        }
      },
      double(n), "element", 12, o);
}

} // namespace

TEST_CASE("energy: a real read of the NVML counter", "[gpu][energy]") {
  const auto got = vecadd_energy(std::size_t{1} << 24, std::chrono::microseconds(0));
  if (!got) return;
  const auto& e = *got;
  INFO(e.dump());
  REQUIRE(e["supported"] == true);
  CHECK(e["tick_s"].get<double>() > 0);
  CHECK(e["mean_w"].get<double>() > e["idle_w"].get<double>());
  CHECK(e["j_per_op"].get<double>() > 0);
  CHECK(e["windows"] == 2);
  // A 200 MB vecadd back to back keeps the GPU busy: the windows must measure a running GPU, not
  // one that waits on the thread reading the counter (the first version measured 20% busy).
  CHECK(e["busy_fraction"].get<double>() > 0.9);
  CHECK(e["host_bound"] == false);
}

TEST_CASE("energy: a body the host paces is host-bound, whatever its chunks' event time says",
          "[gpu][energy]") {
  // A 1Mi vecadd runs for a few microseconds; the host then spins 100 us before the next launch.
  // Timed as the host enqueues them, chunks of this body read 100 us a launch and the GPU 100%
  // busy; held behind the delay kernel they read the kernel's own time.
  const auto got = vecadd_energy(std::size_t{1} << 20, std::chrono::microseconds(100));
  if (!got) return;
  const auto& e = *got;
  INFO(e.dump());
  REQUIRE(e["supported"] == true);
  CHECK(e["busy_fraction"].get<double>() < 0.3);
  CHECK(e["busy_fraction_min"].get<double>() <= e["busy_fraction"].get<double>());
  CHECK(e["host_bound"] == true);
}

TEST_CASE("energy: a body that waits on its own GPU work inside its launches is host-bound",
          "[gpu][energy]") {
  // Each launch waits for the kernel before returning, as pipeline's cpu-augment waits for its
  // uploads: held behind the delay kernel, its chunk cannot be enqueued until the hold ends, so
  // the chunk's time would hold the host's waits. No busy fraction may be claimed.
  const auto got = vecadd_energy(std::size_t{1} << 20, std::chrono::microseconds(0), true);
  if (!got) return;
  const auto& e = *got;
  INFO(e.dump());
  REQUIRE(e["supported"] == true);
  CHECK(e["host_bound"] == true);
  CHECK_FALSE(e.contains("busy_fraction"));
  CHECK(e["busy_unmeasured"].get<std::string>().find("waits inside its launches") !=
        std::string::npos);
}
