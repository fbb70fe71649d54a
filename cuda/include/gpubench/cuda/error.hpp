#pragma once
// One error path for CUDA: every runtime call goes through GPUBENCH_CUDA_TRY, every kernel launch
// is followed by GPUBENCH_CHECK_LAUNCH. Failures become exceptions; only main turns them into exit
// codes. A fault inside a kernel (illegal address...) is asynchronous: it surfaces at a later call,
// so the message of a sticky error also names the most recent kernel launched.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpubench::cuda {

/// A CUDA runtime call or kernel launch failed. Exit code 3.
class cuda_error : public std::runtime_error {
public:
  cuda_error(cudaError_t code, const std::string& what);
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }
  /// Sticky errors (illegal address, launch failure...) poison the context: nothing more can run.
  [[nodiscard]] bool sticky() const noexcept;

private:
  cudaError_t code_;
};

/// Device (or pinned host) memory could not be allocated. A sweep marks the point skipped.
class out_of_memory_error : public cuda_error {
public:
  using cuda_error::cuda_error;
};

/// No usable CUDA device: no GPU, no driver, or a driver older than the runtime. Exit code 77.
class no_device_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Sticky errors leave the context unusable: every later CUDA call of the process fails.
[[nodiscard]] bool is_sticky(cudaError_t code) noexcept;

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

/// Checks the launch of `kernel` (cudaGetLastError) and throws with the kernel's name; once the
/// launch is accepted, records `kernel` as the most recent kernel launched. `kernel` must outlive
/// the process (GPUBENCH_CHECK_LAUNCH accepts string literals only).
void check_launch(const char* kernel, const char* file, int line);

/// The kernel most recently launched by this process (any thread) whose launch was accepted, or
/// nullptr before the first. One relaxed atomic store per launch.
[[nodiscard]] const char* last_launched_kernel() noexcept;

/// For destructors: logs a failure to stderr instead of throwing; tolerates runtime shutdown.
void check_nothrow(cudaError_t code, const char* call, const char* file, int line) noexcept;

/// Throws no_device_error with the reason (no device, no driver, driver too old) unless `device`
/// (or, with device < 0, at least one device) is usable.
void require_device(int device = -1);

/// Number of usable devices, 0 when none (never throws).
int device_count_or_zero() noexcept;

} // namespace gpubench::cuda

#define GPUBENCH_CUDA_TRY(call)                                                                    \
  do {                                                                                             \
    const cudaError_t gpubench_status_ = (call);                                                   \
    if (gpubench_status_ != cudaSuccess)                                                           \
      ::gpubench::cuda::throw_cuda_error(gpubench_status_, #call, __FILE__, __LINE__);             \
  } while (0)

// `"" kernel_name` accepts a string literal only: the name is kept after the call.
#define GPUBENCH_CHECK_LAUNCH(kernel_name)                                                         \
  ::gpubench::cuda::check_launch("" kernel_name, __FILE__, __LINE__)

#define GPUBENCH_CUDA_CHECK_NOTHROW(call)                                                          \
  ::gpubench::cuda::check_nothrow((call), #call, __FILE__, __LINE__)
