#pragma once
// A calibrated delay on a stream. The engine uses it to keep the GPU busy while the host enqueues
// work that cannot wait behind the blocking kernel (the launch-free reference of host-synchronous
// bodies, the busy fraction of --energy), and for the test-only GPUBENCH_TEST_SLOWDOWN
// (docs/ci.md), which shows that the regression gate catches a known slowdown.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpubench::cuda {

/// Enqueues one thread that spins on the GPU's global nanosecond timer for `ns` nanoseconds.
void launch_delay_ns(std::uint64_t ns, cudaStream_t stream);

} // namespace gpubench::cuda
