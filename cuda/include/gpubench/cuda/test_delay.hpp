#pragma once
// Test-only: a calibrated delay on a stream, for GPUBENCH_TEST_SLOWDOWN (docs/ci.md), which shows
// that the regression gate catches a known slowdown. Nothing else launches it.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpubench::cuda {

/// Enqueues one thread that spins on the GPU's global nanosecond timer for `ns` nanoseconds.
void launch_delay_ns(std::uint64_t ns, cudaStream_t stream);

} // namespace gpubench::cuda
