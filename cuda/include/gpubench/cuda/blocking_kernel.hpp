#pragma once
// Holds a stream while the host enqueues the timed work behind it, so that the start event and the
// work it times reach the GPU together and no host launch latency falls between the events.
// The kernel spins on a flag in mapped host memory; release() sets it. A release that never comes
// (an exception between block() and release(), a body that synchronizes with the host) cannot hang
// the GPU: the kernel gives up after its timeout and says so, and the sample is then invalid.
#include <cuda_runtime_api.h>

namespace gpubench::cuda {

class blocking_kernel {
public:
  /// `timeout_s`: how long the kernel spins at most before it lets the stream go on its own.
  explicit blocking_kernel(double timeout_s = 1.0);
  blocking_kernel(const blocking_kernel&) = delete;
  blocking_kernel& operator=(const blocking_kernel&) = delete;
  blocking_kernel(blocking_kernel&&) = delete;
  blocking_kernel& operator=(blocking_kernel&&) = delete;
  ~blocking_kernel();

  /// Enqueues the spinning kernel on `s`; everything enqueued after it waits for release().
  void block(cudaStream_t s);
  /// Lets the kernel finish. Call once per block(), after the work is enqueued.
  void release() noexcept;
  /// After the stream passed the kernel: true when it gave up on its own (the sample is invalid).
  [[nodiscard]] bool timed_out() const noexcept;

private:
  // flags_[0]: release flag written by the host; flags_[1]: timeout report written by the kernel.
  volatile int* flags_ = nullptr;
  int* device_flags_ = nullptr;
  unsigned long long timeout_ns_ = 0;
};

} // namespace gpubench::cuda
