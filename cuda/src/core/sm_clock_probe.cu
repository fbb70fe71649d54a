#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/sm_clock_probe.hpp"

#include "core/globaltimer.cuh"
#include "core/per_device.hpp"

#include <atomic>

namespace gpubench::cuda {
namespace {

// device_[0]: the SM begin() ran on; [1], [2]: its globaltimer and clock64; [3]: end()'s election.
// host_[0..3]: begin's ns and cycles, end's ns and cycles; [4]: 1 once end() recorded.
__device__ __forceinline__ unsigned sm_id() {
  unsigned id = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__global__ void probe_begin(std::uint64_t* state, std::uint64_t* published) {
  const std::uint64_t ns = detail::globaltimer_ns();
  const auto cycles = static_cast<std::uint64_t>(clock64());
  state[0] = sm_id();
  state[1] = ns;
  state[2] = cycles;
  state[3] = 0;
  published[4] = 0;
}

__global__ void probe_end(std::uint64_t* state, std::uint64_t* published) {
  if (sm_id() != state[0]) return;
  const std::uint64_t ns = detail::globaltimer_ns();
  const auto cycles = static_cast<std::uint64_t>(clock64());
  if (atomicCAS(reinterpret_cast<unsigned long long*>(state + 3), 0ULL, 1ULL) != 0) return;
  published[0] = state[1];
  published[1] = state[2];
  published[2] = ns;
  published[3] = cycles;
  __threadfence_system();
  published[4] = 1;
}

// One thread reads the timer until it has changed `changes` times; the smallest step is written.
__global__ void timer_steps(std::uint64_t* smallest, int changes) {
  std::uint64_t last = detail::globaltimer_ns();
  std::uint64_t best = ~std::uint64_t{0};
  for (int seen = 0, spins = 0; seen < changes && spins < (1 << 24); ++spins) {
    const std::uint64_t now = detail::globaltimer_ns();
    if (now == last) continue;
    best = now - last < best ? now - last : best;
    last = now;
    ++seen;
  }
  *smallest = best;
}

constexpr std::size_t published_words = 5;

} // namespace

sm_clock_probe::sm_clock_probe() : sms_(detail::sm_count(detail::current_device_id())) {
  void* dev = nullptr;
  GPUBENCH_CUDA_TRY(cudaMalloc(&dev, 4 * sizeof(std::uint64_t)));
  device_ = static_cast<std::uint64_t*>(dev);
  void* host = nullptr;
  cudaError_t code = cudaHostAlloc(&host, published_words * sizeof(std::uint64_t),
                                   cudaHostAllocMapped | cudaHostAllocPortable);
  if (code == cudaSuccess) {
    host_ = static_cast<volatile std::uint64_t*>(host);
    for (std::size_t i = 0; i < published_words; ++i) host_[i] = 0;
    void* mapped = nullptr;
    code = cudaHostGetDevicePointer(&mapped, host, 0);
    host_on_device_ = static_cast<std::uint64_t*>(mapped);
  }
  if (code != cudaSuccess) {
    if (host != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaFreeHost(host));
    GPUBENCH_CUDA_CHECK_NOTHROW(cudaFree(dev));
    GPUBENCH_CUDA_TRY(code);
  }
}

sm_clock_probe::~sm_clock_probe() {
  // A probe may still be queued on a stream: wait for it before freeing what it writes.
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaFreeHost(const_cast<std::uint64_t*>(host_)));
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaFree(device_));
}

void sm_clock_probe::begin(cudaStream_t s) {
  probe_begin<<<1, 1, 0, s>>>(device_, host_on_device_);
  GPUBENCH_CHECK_LAUNCH("probe_begin");
}

void sm_clock_probe::end(cudaStream_t s) {
  probe_end<<<2 * sms_, 1, 0, s>>>(device_, host_on_device_);
  GPUBENCH_CHECK_LAUNCH("probe_end");
}

std::optional<sm_clock_stamp> sm_clock_probe::read() const noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (host_[4] != 1 || host_[2] <= host_[0] || host_[3] <= host_[1]) return std::nullopt;
  return sm_clock_stamp{host_[3] - host_[1], host_[2] - host_[0]};
}

std::uint64_t globaltimer_resolution_ns() {
  static detail::per_device_cache<int, std::uint64_t> cache;
  return cache.get(0, [](int /*device*/) {
    // Its own non-blocking stream: the legacy stream would wait for a stream the blocking kernel
    // may hold. Called when a sampler frame is made, never inside a sample.
    cudaStream_t s = nullptr;
    GPUBENCH_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void* dev = nullptr;
    cudaError_t code = cudaMalloc(&dev, sizeof(std::uint64_t));
    std::uint64_t step = 0;
    if (code == cudaSuccess) {
      timer_steps<<<1, 1, 0, s>>>(static_cast<std::uint64_t*>(dev), 64);
      code = cudaGetLastError();
      if (code == cudaSuccess)
        code = cudaMemcpyAsync(&step, dev, sizeof(step), cudaMemcpyDeviceToHost, s);
    }
    GPUBENCH_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(s));
    if (dev != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaFree(dev));
    GPUBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s));
    GPUBENCH_CUDA_TRY(code);
    return step;
  });
}

} // namespace gpubench::cuda
