#pragma once
// pipeline's cpu-augment data loader: a host thread that augments batches ahead of the GPU.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace gpubench {

/// The cpu-augment data loader: a host thread that augments batches ahead of the GPU, at most
/// `depth` steps ahead of the last upload (the host ring has `depth` entries).
class cpu_loader {
public:
  explicit cpu_loader(std::function<void(std::uint64_t)> produce)
      : produce_(std::move(produce)), thread_([this] { loop(); }) {}
  cpu_loader(const cpu_loader&) = delete;
  cpu_loader& operator=(const cpu_loader&) = delete;
  ~cpu_loader() {
    {
      const std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  /// Stops producing (after the batch in progress) and restarts at `first`, limit `limit`.
  void reset(std::uint64_t first, std::uint64_t limit) {
    std::unique_lock lock(m_);
    limit_ = next_;
    cv_.wait(lock, [&] { return !busy_; });
    rethrow();
    next_ = first;
    limit_ = limit;
    cv_.notify_all();
  }
  void quiesce() {
    std::unique_lock lock(m_);
    limit_ = next_;
    cv_.wait(lock, [&] { return !busy_; });
  }
  void allow(std::uint64_t limit) {
    {
      const std::lock_guard lock(m_);
      if (limit > limit_) limit_ = limit;
    }
    cv_.notify_all();
  }
  void wait_ready(std::uint64_t step) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return error_ || next_ > step; });
    rethrow();
  }

private:
  void rethrow() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  void loop() {
    std::unique_lock lock(m_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || (next_ < limit_ && !error_); });
      if (stop_) return;
      const std::uint64_t step = next_;
      busy_ = true;
      lock.unlock();
      std::exception_ptr err;
      try {
        produce_(step);
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      busy_ = false;
      if (err)
        error_ = err;
      else if (next_ == step)
        ++next_;
      cv_.notify_all();
    }
  }

  std::function<void(std::uint64_t)> produce_;
  std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;
  std::uint64_t limit_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

} // namespace gpubench
