#pragma once
// The samplers' start line: a hook told when a measurement starts on this thread, which
// --device all --concurrent (scale/multi_gpu_concurrent.hpp) sets to line the GPUs up.
#include <cuda_runtime_api.h>

#include <functional>
#include <string_view>

namespace gpubench {

/// Called by the samplers (measure.cpp) when a measurement starts on this thread: `stream` is
/// the GPU stream it times, or null for a host-timed one. Does nothing unless a hook is set.
void notify_measurement_start(std::string_view name, cudaStream_t stream);
using measurement_start_hook = std::function<void(std::string_view name, cudaStream_t stream)>;
/// Sets this thread's hook for its lifetime (RAII).
class scoped_measurement_start_hook {
public:
  explicit scoped_measurement_start_hook(measurement_start_hook hook);
  scoped_measurement_start_hook(const scoped_measurement_start_hook&) = delete;
  scoped_measurement_start_hook& operator=(const scoped_measurement_start_hook&) = delete;
  ~scoped_measurement_start_hook();
};

} // namespace gpubench
