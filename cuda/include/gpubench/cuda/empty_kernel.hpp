#pragma once
// A kernel that does nothing: `gpubench check` times its launch and the wait for it to finish,
// the round trip every short kernel pays (docs/check.md).
#include <cuda_runtime_api.h>

namespace gpubench::cuda {

/// Enqueues one block of one thread that returns at once, then checks the launch.
void launch_empty_kernel(cudaStream_t stream);

} // namespace gpubench::cuda
