#pragma once
// The GPU's global nanosecond timer (%globaltimer): the same clock on every SM, independent of
// the SM clock, so a wait or a delay measured with it does not scale with clocks the way a cycle
// count would. Its resolution is the hardware's update period (a microsecond or finer).
#include <cstdint>

namespace gpubench::cuda::detail {

__device__ __forceinline__ std::uint64_t globaltimer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

} // namespace gpubench::cuda::detail
