#pragma once
// A calibrated delay on a stream. The engine uses it to keep the GPU busy while the host enqueues
// work that cannot wait behind the blocking kernel (the launch-free reference of host-synchronous
// bodies, the busy fraction of --energy), and for the test-only GPUBENCH_TEST_SLOWDOWN
// (docs/ci.md), which shows that the regression gate catches a known slowdown.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace gpubench::cuda {

/// Enqueues one thread that spins on the GPU's global nanosecond timer for `ns` nanoseconds.
void launch_delay_ns(std::uint64_t ns, cudaStream_t stream);

/// How long a delay kernel must hold the GPU so that work the host takes `enqueue_s` to enqueue
/// behind it runs back to back, without the host's gaps: twice the enqueue plus 50 us, at most
/// `cap_s`. For bodies the blocking kernel cannot hold (the launch-free reference of
/// host-synchronous samples, the busy fraction of --energy).
inline std::uint64_t launch_free_hold_ns(double enqueue_s, double cap_s) {
  return static_cast<std::uint64_t>(std::min(2 * enqueue_s + 50e-6, cap_s) * 1e9);
}

} // namespace gpubench::cuda
