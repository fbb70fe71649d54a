// The CPU thread pool when threads cannot start: it must fail at once, with the
// reason, and never leave a started thread waiting on a destroyed condition variable (a hang).
#include "gpubench/core/thread_pool.hpp"

#include "gpubench/core/errors.hpp"

#include <catch2/catch.hpp>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <future>

using namespace gpubench;
using Catch::Matchers::Contains;

TEST_CASE("thread pool: a thread that fails to start part way fails the constructor cleanly",
          "[thread_pool]") {
  const int failing = GENERATE(1, 2, 7);
  INFO("worker " << failing << " of 8 fails to start");
  // In another thread, so that a hang fails the test instead of blocking the suite.
  auto done = std::async(std::launch::async, [failing] {
    thread_pool::fail_thread_start_for_testing(failing);
    try {
      thread_pool pool(8);
      return std::string("constructed");
    } catch (const point_error& e) {
      return std::string(e.what());
    }
  });
  REQUIRE(done.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  const std::string what = done.get();
  CHECK_THAT(what,
             Contains("cannot start CPU thread") && Contains("of 8") && Contains("--cpu-threads"));
}

TEST_CASE("thread pool: after a failed start the next pool starts and works", "[thread_pool]") {
  thread_pool::fail_thread_start_for_testing(3);
  CHECK_THROWS_AS(thread_pool(4), point_error);
  thread_pool pool(4); // the injection is spent: one failure only
  std::atomic<std::size_t> sum{0};
  pool.parallel_for(1000, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum == 999 * 1000 / 2);
}

TEST_CASE("thread pool: by default one thread per CPU the thread's affinity allows",
          "[thread_pool]") {
  // In a thread of its own: the affinity set here is that thread's alone.
  auto done = std::async(std::launch::async, [] {
    cpu_set_t all;
    CPU_ZERO(&all);
    REQUIRE(::sched_getaffinity(0, sizeof all, &all) == 0);
    const int allowed = CPU_COUNT(&all);
    CHECK(usable_cpu_cores() == allowed);
    CHECK(thread_pool().size() == allowed);
    if (allowed < 2) {
      WARN("one usable CPU: the confinement cannot be narrowed further here");
      return;
    }
    int first = 0;
    while (!CPU_ISSET(first, &all)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK(usable_cpu_cores() == 1);
    CHECK(thread_pool().size() == 1);
    CHECK(thread_pool(3).size() == 3); // an explicit count is kept
    REQUIRE(::sched_setaffinity(0, sizeof all, &all) == 0);
    CHECK(usable_cpu_cores() == allowed);
  });
  REQUIRE(done.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  done.get();
}
