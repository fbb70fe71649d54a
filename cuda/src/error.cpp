#include "gpubench/cuda/error.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace gpubench::cuda {

cuda_error::cuda_error(cudaError_t code, const std::string& what)
    : std::runtime_error(what), code_(code) {}

bool cuda_error::sticky() const noexcept {
  switch (code_) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorHardwareStackError:
  case cudaErrorAssert:
  case cudaErrorLaunchTimeout:
  case cudaErrorECCUncorrectable: return true;
  default: return false;
  }
}

namespace {
std::string describe(cudaError_t code, const char* what, const char* file, int line) {
  return fmt::format("{} ({}: {}) at {}:{}", what, cudaGetErrorName(code), cudaGetErrorString(code),
                     file, line);
}
} // namespace

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  // Clear a non-sticky error so later calls are not reported for it.
  (void)cudaGetLastError();
  const auto msg = describe(code, call, file, line);
  if (code == cudaErrorMemoryAllocation) throw out_of_memory_error(code, msg);
  if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver ||
      code == cudaErrorInitializationError || code == cudaErrorCallRequiresNewerDriver) {
    require_device(); // throws no_device_error with the reason
  }
  throw cuda_error(code, msg);
}

void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t code = cudaGetLastError();
  if (code != cudaSuccess)
    throw_cuda_error(code, fmt::format("launch of kernel {}", kernel).c_str(), file, line);
}

void check_nothrow(cudaError_t code, const char* call, const char* file, int line) noexcept {
  // Teardown after a sticky error or at process exit reports these; nothing useful to add.
  if (code == cudaSuccess || code == cudaErrorCudartUnloading) return;
  std::fprintf(stderr, "gpubench: warning: %s failed (%s) at %s:%d\n", call, cudaGetErrorName(code),
               file, line);
}

void require_device(int device) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaGetLastError();
  if (code == cudaErrorInsufficientDriver || code == cudaErrorCallRequiresNewerDriver) {
    if (driver == 0)
      throw no_device_error("no usable CUDA device: no NVIDIA driver is installed or loaded");
    throw no_device_error(fmt::format(
        "no usable CUDA device: the driver supports CUDA {}.{} but gpubench was built with "
        "runtime {}.{}; update the driver",
        driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10));
  }
  if (code == cudaErrorNoDevice || (code == cudaSuccess && count == 0))
    throw no_device_error("no usable CUDA device: no CUDA-capable GPU was found");
  if (code != cudaSuccess)
    throw no_device_error(fmt::format("no usable CUDA device: {} ({})", cudaGetErrorName(code),
                                      cudaGetErrorString(code)));
  if (device >= count)
    throw no_device_error(fmt::format("no usable CUDA device: device {} requested but only {} "
                                      "found",
                                      device, count));
}

int device_count_or_zero() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

} // namespace gpubench::cuda
