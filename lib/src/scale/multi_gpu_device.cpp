#include "gpubench/scale/multi_gpu_device.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

namespace gpubench {

std::string gpu_uuid(int device) noexcept {
  try {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return {};
    const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                       "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                       b[12], b[13], b[14], b[15]);
  } catch (...) {
    return {};
  }
}

} // namespace gpubench
