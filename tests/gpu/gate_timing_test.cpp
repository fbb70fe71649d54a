// The GPU side of the regression gate (docs/ci.md): the delay kernel waits the time it is asked
// for, and the sampler marks a body of many tiny launches timed with its launches host_bound, but
// not the same body behind the blocking kernel, nor a single long kernel.
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/test_delay.hpp"
#include "gpubench/engine/measure.hpp"

#include <catch2/catch.hpp>

using namespace gpubench;

TEST_CASE("the test delay kernel waits the requested time", "[gpu][gate]") {
  const cuda::stream s;
  const cuda::event start;
  const cuda::event stop;
  for (const std::uint64_t us : {50, 200, 1000}) {
    INFO(us << " us");
    cuda::launch_delay_ns(us * 1000, s.get()); // warm the launch path
    start.record(s.get());
    cuda::launch_delay_ns(us * 1000, s.get());
    stop.record(s.get());
    stop.synchronize();
    const double t = cuda::elapsed_seconds(start, stop);
    CHECK(t >= 0.97e-6 * static_cast<double>(us));
    CHECK(t <= 1e-6 * static_cast<double>(us) + 20e-6);
  }
}

TEST_CASE("many tiny launches are host_bound, one long kernel is not", "[gpu][gate]") {
  const cuda::stream s;
  gpu_sampler sampler(s.get(), nullptr);
  measure_options opts;
  opts.min_samples = 5;
  opts.max_samples = 5;
  opts.min_time = 0;
  const auto tiny_body = [](cudaStream_t st) {
    for (int i = 0; i < 200; ++i) cuda::launch_delay_ns(0, st);
  };
  // Timed with its launches (a body the blocking kernel cannot hold), the GPU waits on the host.
  const auto tiny = sampler.run("tiny", opts, {}, tiny_body, body_kind::host_synchronous);
  INFO("tiny: median " << tiny.median() << " s, enqueue " << tiny.host_enqueue_s
                       << " s, launch-free " << tiny.launch_free_s << " s");
  CHECK(tiny.timing == gpu_timing::includes_launch);
  CHECK(tiny.host_bound);
  CHECK(tiny.launch_free_s > 0);
  CHECK(tiny.launch_free_s < tiny.median());
  // Behind the blocking kernel the same launches run back to back, whatever the host's pace: the
  // samples are launch-free (launch_free_s is the median itself) and not host-bound, although
  // the host still takes longer to enqueue them than the GPU to run them.
  const auto held = sampler.run("tiny held", opts, {}, tiny_body);
  INFO("held: median " << held.median() << " s, enqueue " << held.host_enqueue_s << " s");
  CHECK(held.timing == gpu_timing::launch_free);
  CHECK_FALSE(held.host_bound);
  CHECK(held.launch_free_s == held.median());
  CHECK(held.median() < tiny.median());

  const auto long_kernel =
      sampler.run("long", opts, {}, [](cudaStream_t st) { cuda::launch_delay_ns(2'000'000, st); });
  INFO("long: median " << long_kernel.median() << " s, enqueue " << long_kernel.host_enqueue_s
                       << " s, launch-free " << long_kernel.launch_free_s << " s");
  CHECK_FALSE(long_kernel.host_bound);
  CHECK(long_kernel.median() == Approx(2e-3).epsilon(0.05));
}
