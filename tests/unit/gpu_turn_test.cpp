// Two check processes on one GPU take turns (check/gpu_turn.hpp): a second holder waits for the
// first, a holder of another GPU does not, and no UUID holds nothing.
#include "gpubench/check/gpu_turn.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace gpubench;

TEST_CASE("check: two holders of one GPU take turns, other GPUs do not wait", "[check]") {
  const std::string uuid = fmt::format("GPU-test-{}", ::getpid());
  auto first = std::make_unique<gpu_turn>(uuid);
  CHECK_FALSE(first->waited());
  {
    const gpu_turn other_gpu(uuid + "-other");
    CHECK_FALSE(other_gpu.waited());
  }
  std::atomic<bool> got{false};
  bool waited = false;
  std::thread second([&] {
    const gpu_turn t(uuid);
    waited = t.waited();
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(got.load()); // still held by the first
  first.reset();
  second.join();
  CHECK(got.load());
  CHECK(waited);
  const gpu_turn none(""); // no UUID: nothing to hold, nothing to wait for
  CHECK_FALSE(none.waited());
}
