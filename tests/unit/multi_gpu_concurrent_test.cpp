// --concurrent's host side (docs/multi-gpu.md): one thread per device, the threads meet before
// every measurement, a failing thread does not hang the others, and the results merge per point.
#include "gpubench/engine/point.hpp"
#include "gpubench/scale/multi_gpu_concurrent.hpp"

#include "common.hpp"
#include "gpubench/cuda/error.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using namespace gpubench;
using namespace std::chrono_literals;

TEST_CASE("timed_barrier: nobody passes before everyone arrived; the completion runs once per "
          "phase",
          "[multi_gpu]") {
  constexpr int threads = 4;
  constexpr int phases = 50;
  std::atomic<int> arrived{0};
  std::atomic<int> completions{0};
  std::atomic<bool> early{false};
  timed_barrier barrier(threads, [&] { ++completions; });
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int p = 0; p < phases; ++p) {
        ++arrived;
        REQUIRE(barrier.arrive_and_wait(10s));
        if (arrived.load() < threads * (p + 1)) early = true;
      }
    });
  for (auto& t : pool) t.join();
  CHECK_FALSE(early);
  CHECK(completions == phases);
}

TEST_CASE("timed_barrier: a thread that drops out lets the others through; a lost one times out",
          "[multi_gpu]") {
  timed_barrier barrier(2);
  std::thread leaver([&] { barrier.drop(); });
  CHECK(barrier.arrive_and_wait(10s)); // alone now: passes
  leaver.join();

  timed_barrier waiting(2);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(waiting.arrive_and_wait(50ms)); // the other never comes
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK_FALSE(waiting.arrive_and_wait(10s)); // broken for good
}

namespace {

/// A benchmark whose points take two host-timed measurements, each recording which threads were
/// inside it at once.
struct overlap_probe {
  std::mutex mutex;
  std::set<std::thread::id> inside;
  std::size_t max_inside = 0;
};

} // namespace

TEST_CASE("execute_concurrent: every device runs every point, all threads start each "
          "measurement together, results merge per point with aggregates",
          "[multi_gpu]") {
  overlap_probe probe;
  benchmark b;
  b.name = "fake";
  b.run_point = [&probe](const point_view& point, run_context& /*ctx*/) {
    result r;
    r.params = point.values();
    for (const char* name : {"kernel", "copy"}) {
      // The measurement starts (and meets the other threads) before its first sample.
      r.measurements.push_back(
          measure_host(name, {0, 1, 1, 0, 1, 10, true}, {1e6, 1e3, "items"}, [&] {
            {
              const std::lock_guard lock(probe.mutex);
              probe.inside.insert(std::this_thread::get_id());
              probe.max_inside = std::max(probe.max_inside, probe.inside.size());
            }
            std::this_thread::sleep_for(20ms);
            const std::lock_guard lock(probe.mutex);
            probe.inside.erase(std::this_thread::get_id());
          }));
    }
    return r;
  };
  std::vector<planned_point> points;
  for (const int device : {0, 1, 2})
    for (const int n : {1, 2}) points.push_back({&b, {{"n", n}, {"device", device}}});
  common_options opts;
  opts.verbosity = 0;
  opts.cpu_threads = 1;
  concurrent_options copts;
  copts.device_gate = false; // host barriers only: no GPU here
  copts.barrier_timeout_s = 30;
  const auto rep = execute_concurrent(points, opts, {"gpubench", "fake"}, copts);

  REQUIRE(rep.results.size() == 6);
  for (std::size_t i = 0; i < rep.results.size(); ++i) {
    CHECK(rep.results[i].rank == static_cast<int>(i % 3));
    CHECK(rep.results[i].device == static_cast<int>(i % 3));
    CHECK(rep.results[i].params["n"] == static_cast<int>(1 + i / 3));
  }
  CHECK(probe.max_inside == 3); // all three were inside one measurement at once
  CHECK(rep.aggregate["mode"] == "concurrent");
  CHECK(rep.aggregate["ranks"] == 3);
  REQUIRE(rep.aggregate["points"].size() == 2);
  const auto& kernel = rep.aggregate["points"][0]["measurements"][0];
  CHECK(kernel["name"] == "kernel");
  CHECK(kernel["ranks"] == 3);
  CHECK(kernel["start_skew_clock"] == "host");
  CHECK(kernel["start_skew_s"].get<double>() >= 0);
  CHECK(kernel["start_skew_s"].get<double>() < 1.0);
  CHECK(rep.ranks.size() == 3);
}

TEST_CASE("execute_concurrent: a device whose point fails leaves the others to finish",
          "[multi_gpu]") {
  benchmark b;
  b.name = "fake";
  b.run_point = [](const point_view& point, run_context& /*ctx*/) -> result {
    if (point.device() == 1 && point.values()["n"] == 1)
      throw cuda::out_of_memory_error(cudaErrorMemoryAllocation, "fake: out of memory");
    result r;
    r.params = point.values();
    r.measurements.push_back(measure_host("kernel", {0, 1, 1, 0, 1, 10, true}, {1e6, 1e3, "items"},
                                          [] { std::this_thread::sleep_for(1ms); }));
    return r;
  };
  std::vector<planned_point> points;
  for (const int device : {0, 1})
    for (const int n : {1, 2}) points.push_back({&b, {{"n", n}, {"device", device}}});
  common_options opts;
  opts.verbosity = 0;
  concurrent_options copts;
  copts.device_gate = false;
  copts.barrier_timeout_s = 30;
  const auto rep = execute_concurrent(points, opts, {"gpubench", "fake"}, copts);
  REQUIRE(rep.results.size() == 4);
  CHECK(rep.results[0].status == result_status::ok);
  CHECK(rep.results[1].status == result_status::skipped);
  CHECK(rep.results[3].status == result_status::ok);
  CHECK(rep.aggregate["points"][0]["ranks_measured"] == 1);
  CHECK(rep.aggregate["points"][1]["ranks_measured"] == 2);
}
