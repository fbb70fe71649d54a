#pragma once
// A persistent pool for the CPU references: threads are started once so that timed regions
// measure the work, not thread creation.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpubench {

class thread_pool {
public:
  /// `threads` <= 0 means all hardware threads.
  explicit thread_pool(int threads = 0);
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool();

  [[nodiscard]] int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

  /// Splits [0, n) into size() contiguous parts and runs fn(begin, end) on each, the calling
  /// thread included; returns when all are done. Rethrows the first exception thrown.
  void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn);

private:
  void worker_loop(int index);

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
