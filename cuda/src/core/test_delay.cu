// The delay kernel (test_delay.hpp). Spins on %globaltimer (nanoseconds, independent of the
// SM clock) so the delay does not scale with clocks the way a cycle count would.
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/test_delay.hpp"

#include "core/globaltimer.cuh"

namespace gpubench::cuda {
namespace {

__global__ void delay_kernel(std::uint64_t ns) {
  const std::uint64_t start = detail::globaltimer_ns();
  while (detail::globaltimer_ns() - start < ns) {
  }
}

} // namespace

void launch_delay_ns(std::uint64_t ns, cudaStream_t stream) {
  delay_kernel<<<1, 1, 0, stream>>>(ns);
  GPUBENCH_CUDA_TRY(cudaGetLastError());
}

} // namespace gpubench::cuda
