#include "gpubench/cuda/error.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <string>

namespace gpubench::cuda {

cuda_error::cuda_error(cudaError_t code, const std::string& what)
    : std::runtime_error(what), code_(code) {}

bool cuda_error::sticky() const noexcept { return is_sticky(code_); }

bool is_sticky(cudaError_t code) noexcept {
  switch (code) {
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

// A string literal (GPUBENCH_CHECK_LAUNCH), so a pointer is all there is to keep.
std::atomic<const char*> last_kernel{nullptr};
// Set once a sticky error has been reported; the destructors that run after it stay quiet.
std::atomic<bool> sticky_reported{false};

std::string describe(cudaError_t code, const char* what, const char* file, int line) {
  return fmt::format("{} ({}: {}) at {}:{}", what, cudaGetErrorName(code), cudaGetErrorString(code),
                     file, line);
}

/// A sticky error is raised by the device when a kernel faults, and reported by whichever call
/// comes next: the call named is where it surfaced, the kernel named is the likely culprit.
std::string sticky_note(const char* launched) {
  const char* kernel = last_launched_kernel();
  return fmt::format(" (sticky error; most recent kernel launched{}: {})", launched,
                     kernel != nullptr ? kernel : "none recorded");
}

[[noreturn]] void throw_described(cudaError_t code, const char* call, const char* file, int line,
                                  const char* launched) {
  // Clear a non-sticky error so later calls are not reported for it.
  (void)cudaGetLastError();
  auto msg = describe(code, call, file, line);
  if (is_sticky(code)) {
    msg += sticky_note(launched);
    sticky_reported.store(true, std::memory_order_relaxed);
  }
  if (code == cudaErrorMemoryAllocation) throw out_of_memory_error(code, msg);
  if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver ||
      code == cudaErrorInitializationError || code == cudaErrorCallRequiresNewerDriver) {
    require_device(); // throws no_device_error with the reason
  }
  throw cuda_error(code, msg);
}

} // namespace

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw_described(code, call, file, line, "");
}

void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t code = cudaGetLastError();
  if (code == cudaSuccess) {
    last_kernel.store(kernel, std::memory_order_relaxed);
    return;
  }
  // A sticky code here was raised before this launch (or by this kernel, already): the record
  // still names the kernel launched before it.
  throw_described(code, fmt::format("launch of kernel {}", kernel).c_str(), file, line,
                  " before it");
}

const char* last_launched_kernel() noexcept { return last_kernel.load(std::memory_order_relaxed); }

void check_nothrow(cudaError_t code, const char* call, const char* file, int line) noexcept {
  // Process exit reports this; nothing useful to add.
  if (code == cudaSuccess || code == cudaErrorCudartUnloading) return;
  if (is_sticky(code)) {
    // Every resource freed after a sticky error fails with it: report it once, not per buffer.
    if (sticky_reported.exchange(true, std::memory_order_relaxed)) return;
    const char* kernel = last_launched_kernel();
    std::fprintf(stderr,
                 "gpubench: warning: %s failed (%s) at %s:%d (sticky error; most recent kernel "
                 "launched: %s)\n",
                 call, cudaGetErrorName(code), file, line,
                 kernel != nullptr ? kernel : "none recorded");
    return;
  }
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
