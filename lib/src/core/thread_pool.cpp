#include "gpubench/core/thread_pool.hpp"

#include "gpubench/core/errors.hpp"

#include <fmt/format.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <system_error>
#include <utility>

namespace gpubench {

namespace {
std::atomic<int> failing_start{0};
} // namespace

int usable_cpu_cores() noexcept {
  const int machine = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // A mask sized for the machine (and at least glibc's 1024 CPUs), so large hosts are read whole.
  const int bits = std::max(machine, CPU_SETSIZE);
  cpu_set_t* set = CPU_ALLOC(bits);
  if (set == nullptr) return machine;
  const std::size_t size = CPU_ALLOC_SIZE(bits);
  int n = machine;
  if (::sched_getaffinity(0, size, set) == 0) n = std::max(1, CPU_COUNT_S(size, set));
  CPU_FREE(set);
  return n;
}

std::string cpu_confinement(int usable, int machine) {
  return fmt::format("this process may run on {} of the {} CPUs (its CPU affinity: an MPI "
                     "launcher's binding, taskset or a cpuset)",
                     usable, machine);
}

void thread_pool::fail_thread_start_for_testing(int nth) noexcept { failing_start.store(nth); }

thread_pool::thread_pool(int threads) {
  int n = threads > 0 ? threads : usable_cpu_cores();
  n = std::max(n, 1);
  const int failing = failing_start.exchange(0);
  try {
    workers_.reserve(static_cast<std::size_t>(n - 1));
    for (int i = 1; i < n; ++i) {
      if (i == failing)
        throw std::system_error(EAGAIN, std::generic_category(), "test-only injected failure");
      workers_.emplace_back([this, i] { worker_loop(i); });
    }
  } catch (const std::exception& e) {
    // Unwinding as is would destroy the condition variable the started workers wait on (and
    // joinable threads): stop them first. A benchmark runs with the threads it was asked for or
    // not at all, so the pool does not shrink silently.
    const auto started = workers_.size();
    stop_and_join();
    throw point_error(fmt::format(
        "cannot start CPU thread {} of {} ({}); lower --cpu-threads or raise the process limit "
        "(ulimit -u, the container's pids limit, address space)",
        started + 1, n, e.what()));
  }
}

void thread_pool::stop_and_join() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

thread_pool::~thread_pool() { stop_and_join(); }

namespace {
std::pair<std::size_t, std::size_t> part(std::size_t n, int parts, int index) {
  const auto p = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  return {n * i / p, n * (i + 1) / p};
}
} // namespace

void thread_pool::worker_loop(int index) {
  std::size_t seen = 0;
  while (true) {
    const std::function<void(std::size_t, std::size_t)>* job = nullptr;
    std::size_t n = 0;
    {
      std::unique_lock lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
    }
    const auto [begin, end] = part(n, size(), index);
    std::exception_ptr err;
    try {
      if (begin < end) (*job)(begin, end);
    } catch (...) {
      err = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      if (err && !error_) error_ = err;
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void thread_pool::parallel_for(std::size_t n,
                               const std::function<void(std::size_t, std::size_t)>& fn) {
  if (workers_.empty() || n < 2) {
    if (n > 0) fn(0, n);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    pending_ = static_cast<int>(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  std::exception_ptr mine;
  try {
    const auto [begin, end] = part(n, size(), 0);
    if (begin < end) fn(begin, end);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

} // namespace gpubench
