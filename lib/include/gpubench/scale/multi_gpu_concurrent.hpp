#pragma once
// --device all --concurrent (docs/multi-gpu.md): every point runs on every selected GPU
// at once, one host thread per GPU. Before each measurement the threads meet at a barrier and
// each GPU's stream waits in a spin kernel that the host releases for all at once (a
// cuda::start_gate), so the timed regions begin together; the spread of the release stamps is
// reported as the start skew.
#include "gpubench/engine/measurement_start.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/scale/multi_gpu_merge.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string_view>

namespace gpubench {

/// A barrier for a changing number of threads that never waits past its timeout. Like
/// std::barrier (a completion runs in the last thread to arrive, before any is released) but a
/// thread may leave for good (drop) and a wait that times out breaks the barrier for everyone, so
/// one lost thread cannot hang the others.
class timed_barrier {
public:
  timed_barrier(std::size_t expected, std::function<void()> completion = {});
  /// Arrives and waits for the others; false when the wait timed out or the barrier is broken.
  bool arrive_and_wait(std::chrono::duration<double> timeout);
  /// Leaves for good; completes the current phase if everyone else still expected has arrived.
  void drop();
  [[nodiscard]] std::size_t expected() const;

private:
  void complete_locked();
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t expected_;
  std::size_t arrived_ = 0;
  std::uint64_t phase_ = 0;
  bool broken_ = false;
  std::function<void()> completion_;
};

struct concurrent_options {
  /// A thread that does not reach a barrier within this many seconds breaks it (the run fails
  /// with a message instead of hanging). Also bounds each GPU's spin kernel.
  double barrier_timeout_s = 600;
  /// false: threads meet at host barriers only, no GPU kernel (unit tests, CPU-only runs).
  bool device_gate = true;
};

/// Runs `points` (planned for several devices, device-major as plan_points makes them) with one
/// thread per device, all at once; returns the merged report (mode "concurrent", one "rank" per
/// device in the order of the plan). Each thread has its own run_context built from `opts` (the
/// CPU threads divided among them; logs from the first only).
run_report execute_concurrent(const std::vector<planned_point>& points, const common_options& opts,
                              const std::vector<std::string>& argv,
                              const concurrent_options& copts = {});

} // namespace gpubench
