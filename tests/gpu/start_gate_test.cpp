// The start gate of --concurrent (docs/multi-gpu.md): work queued behind it waits for the host's
// release, its stamp records when the release was seen, and a release that never comes ends the
// wait at the timeout instead of hanging the GPU.
#include "gpubench/cuda/start_gate.hpp"
#include "gpubench/cuda/stream.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace gpubench;
using namespace std::chrono_literals;

TEST_CASE("start_gate: the stream waits for the release, the stamp records it", "[multi_gpu]") {
  const cuda::scoped_device on(0);
  const cuda::stream s;
  cuda::start_gate gate(2, 30.0);
  gate.wait_on(0, 1, s.get());
  cuda::event done;
  done.record(s.get());
  std::this_thread::sleep_for(50ms);
  CHECK(cudaEventQuery(done.get()) == cudaErrorNotReady); // still held at the gate
  gate.release(1);
  s.synchronize();
  const auto stamp = gate.read(0);
  CHECK(stamp.generation == 1);
  CHECK_FALSE(stamp.timed_out);
  CHECK(stamp.globaltimer_ns > 0);
  CHECK(gate.read(1).generation == 0); // the other slot never waited

  // A later generation waits again; an earlier release does not let it through.
  gate.wait_on(1, 2, s.get());
  done.record(s.get());
  std::this_thread::sleep_for(20ms);
  CHECK(cudaEventQuery(done.get()) == cudaErrorNotReady);
  gate.release(2);
  s.synchronize();
  CHECK(gate.read(1).generation == 2);
  CHECK(gate.read(1).globaltimer_ns >= stamp.globaltimer_ns);
}

TEST_CASE("start_gate: a release that never comes ends at the timeout", "[multi_gpu]") {
  const cuda::scoped_device on(0);
  const cuda::stream s;
  cuda::start_gate gate(1, 0.05);
  const auto t0 = std::chrono::steady_clock::now();
  gate.wait_on(0, 1, s.get());
  s.synchronize();
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  CHECK(gate.read(0).generation == 1);
  CHECK(gate.read(0).timed_out);
}
