#include "gpubench/cuda/blocking_kernel.hpp"
#include "gpubench/cuda/error.hpp"

#include "core/globaltimer.cuh"

#include <atomic>

namespace gpubench::cuda {
namespace {

// One thread: it occupies one SM slot while the stream waits, nothing else.
__global__ void spin_until_released(volatile int* flags, unsigned long long timeout_ns) {
  const std::uint64_t start = detail::globaltimer_ns();
  while (flags[0] == 0) {
    if (detail::globaltimer_ns() - start > timeout_ns) {
      flags[1] = 1;
      break;
    }
  }
}

} // namespace

blocking_kernel::blocking_kernel(double timeout_s)
    : timeout_ns_(static_cast<unsigned long long>(timeout_s * 1e9)) {
  void* host = nullptr;
  GPUBENCH_CUDA_TRY(
      cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  flags_ = static_cast<volatile int*>(host);
  flags_[0] = 1; // released: a kernel launched before block() would not spin
  flags_[1] = 0;
  void* dev = nullptr;
  const cudaError_t code = cudaHostGetDevicePointer(&dev, host, 0);
  if (code != cudaSuccess) {
    GPUBENCH_CUDA_CHECK_NOTHROW(cudaFreeHost(host));
    GPUBENCH_CUDA_TRY(code);
  }
  device_flags_ = static_cast<int*>(dev);
}

blocking_kernel::~blocking_kernel() {
  release();
  // The stream may still hold a spinning kernel that reads the flags: wait for it before freeing.
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaFreeHost(const_cast<int*>(flags_)));
}

void blocking_kernel::block(cudaStream_t s) {
  flags_[1] = 0;
  flags_[0] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  spin_until_released<<<1, 1, 0, s>>>(device_flags_, timeout_ns_);
  GPUBENCH_CHECK_LAUNCH("spin_until_released");
}

void blocking_kernel::release() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flags_[0] = 1;
}

bool blocking_kernel::timed_out() const noexcept { return flags_[1] != 0; }

} // namespace gpubench::cuda
