#include "gpubench/cuda/device.hpp"

#include "gpubench/cuda/stream.hpp"

#include <fmt/format.h>

#include <array>

namespace gpubench::cuda {

namespace {
int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  GPUBENCH_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}
std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
} // namespace

device_info query_device(int device) {
  require_device(device);
  device_info info;
  info.id = device;
  cudaDeviceProp prop{};
  GPUBENCH_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, device);
  info.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
  info.sms = attribute(cudaDevAttrMultiProcessorCount, device);
  info.l2_bytes = attribute(cudaDevAttrL2CacheSize, device);
  info.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
  info.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
  info.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
  info.async_engines = attribute(cudaDevAttrAsyncEngineCount, device);
  std::size_t total = 0;
  {
    scoped_device guard(device);
    std::size_t free_bytes = 0;
    GPUBENCH_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  }
  info.memory_bytes = total;
  std::array<char, 32> bus{};
  GPUBENCH_CUDA_TRY(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device));
  info.pci_bus_id = bus.data();
  info.uuid = device_uuid(device);
  return info;
}

std::string driver_version_string() noexcept {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0) {
    (void)cudaGetLastError();
    return "none";
  }
  return version_string(v);
}

std::string runtime_version_string() noexcept {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return "unknown";
  }
  return version_string(v);
}

std::string device_uuid(int device) noexcept {
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

int max_sm_clock_khz(int device) noexcept {
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) != cudaSuccess) {
    (void)cudaGetLastError(); // not sticky: clear it for the next call's check
    return 0;
  }
  return khz;
}

} // namespace gpubench::cuda
