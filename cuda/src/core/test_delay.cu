// The delay kernel (test_delay.hpp). Spins on %globaltimer (nanoseconds, independent of the
// SM clock) so the delay does not scale with clocks the way a cycle count would.
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/test_delay.hpp"

namespace gpubench::cuda {
namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void delay_kernel(std::uint64_t ns) {
  const std::uint64_t start = global_ns();
  while (global_ns() - start < ns) {
  }
}

} // namespace

void launch_delay_ns(std::uint64_t ns, cudaStream_t stream) {
  delay_kernel<<<1, 1, 0, stream>>>(ns);
  GPUBENCH_CUDA_TRY(cudaGetLastError());
}

} // namespace gpubench::cuda
