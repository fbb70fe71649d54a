#pragma once
// A persistent pool for the CPU references: threads are started once so that timed regions
// measure the work, not thread creation.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpubench {

/// The CPUs this process may run on: its affinity mask, which an MPI launcher's binding
/// (Open MPI binds each rank to one core when it starts two), `taskset` or a cgroup's cpuset can
/// make smaller than the machine. Never below 1; all hardware threads when the mask cannot be read.
[[nodiscard]] int usable_cpu_cores() noexcept;
/// What a process confined to `usable` of the machine's `machine` CPUs is told (a run's log and
/// `doctor` say it alike): "this process may run on 1 of the 16 CPUs (its CPU affinity: ...)".
[[nodiscard]] std::string cpu_confinement(int usable, int machine);

class thread_pool {
public:
  /// `threads` <= 0 means every CPU the process may run on (usable_cpu_cores()). When a thread
  /// cannot start (a process or address-space limit), the threads already started are stopped and
  /// joined and point_error says which thread failed and why: the constructor never leaves a thread
  /// waiting.
  explicit thread_pool(int threads = 0);
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool();

  [[nodiscard]] int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

  /// Splits [0, n) into size() contiguous parts and runs fn(begin, end) on each, the calling
  /// thread included; returns when all are done. Rethrows the first exception thrown.
  void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn);

  /// Test-only: in the next pool constructed, starting worker thread `nth` (1 is the first worker,
  /// the caller's thread is 0) fails as std::thread does under `ulimit -u`. 0 disarms.
  static void fail_thread_start_for_testing(int nth) noexcept;

private:
  void worker_loop(int index);
  void stop_and_join() noexcept;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  const std::function<void(std::size_t, std::size_t)>* job_ = nullptr;
  std::size_t job_n_ = 0;
  std::size_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

} // namespace gpubench
