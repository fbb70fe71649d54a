#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/start_gate.hpp"

#include "core/globaltimer.cuh"

#include <atomic>
#include <stdexcept>

namespace gpubench::cuda {

namespace {

/// One thread polls the host flag over the bus; nothing else runs on the stream until it returns.
__global__ void start_gate_wait(const volatile std::uint64_t* flag, std::uint64_t generation,
                                std::uint64_t timeout_ns, volatile std::uint64_t* stamp) {
  const std::uint64_t began = detail::globaltimer_ns();
  bool timed_out = false;
  while (*flag < generation) {
    if (detail::globaltimer_ns() - began > timeout_ns) {
      timed_out = true;
      break;
    }
  }
  stamp[1] = timed_out ? 0 : detail::globaltimer_ns();
  stamp[2] = timed_out ? 1 : 0;
  __threadfence_system();
  stamp[0] = generation; // last: the host reads a whole stamp once this matches
}

} // namespace

start_gate::start_gate(int slots, double timeout_s)
    : slots_(slots), timeout_ns_(static_cast<std::uint64_t>(timeout_s * 1e9)) {
  if (slots < 1) throw std::invalid_argument("start_gate: at least one slot");
  const std::size_t words = 1 + 3 * static_cast<std::size_t>(slots);
  void* p = nullptr;
  // Portable: every device may map it; mapped: kernels read the flag in place.
  GPUBENCH_CUDA_TRY(cudaHostAlloc(&p, words * sizeof(std::uint64_t),
                                  cudaHostAllocMapped | cudaHostAllocPortable));
  host_ = static_cast<std::uint64_t*>(p);
  for (std::size_t i = 0; i < words; ++i) host_[i] = 0;
}

start_gate::~start_gate() { GPUBENCH_CUDA_CHECK_NOTHROW(cudaFreeHost(host_)); }

void start_gate::wait_on(int slot, std::uint64_t generation, cudaStream_t stream) {
  if (slot < 0 || slot >= slots_) throw std::out_of_range("start_gate: slot out of range");
  std::uint64_t* flag = nullptr;
  GPUBENCH_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag), host_, 0));
  start_gate_wait<<<1, 1, 0, stream>>>(flag, generation, timeout_ns_, flag + 1 + 3 * slot);
  GPUBENCH_CHECK_LAUNCH("start_gate_wait");
}

void start_gate::release(std::uint64_t generation) noexcept {
  std::atomic_ref<std::uint64_t>(host_[0]).store(generation, std::memory_order_release);
}

start_gate::stamp start_gate::read(int slot) const noexcept {
  if (slot < 0 || slot >= slots_) return {};
  std::uint64_t* s = host_ + 1 + 3 * slot;
  stamp out;
  out.generation = std::atomic_ref<std::uint64_t>(s[0]).load(std::memory_order_acquire);
  out.globaltimer_ns = s[1];
  out.timed_out = s[2] != 0;
  return out;
}

} // namespace gpubench::cuda
