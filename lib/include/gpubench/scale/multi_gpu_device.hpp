#pragma once
// Multi-GPU: how a rank names its GPU across a job.
#include <string>

namespace gpubench {

/// The device's UUID as nvidia-smi prints it ("GPU-xxxxxxxx-..."), "" when it cannot be read.
std::string gpu_uuid(int device) noexcept;

} // namespace gpubench
