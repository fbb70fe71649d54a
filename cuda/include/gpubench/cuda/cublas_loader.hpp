#pragma once
// cuBLAS is loaded when first used (dlopen), not linked: the pipeline alone needs it, so vecadd,
// augment, devices and doctor run on a machine that has only the NVIDIA driver, and a missing
// cuBLAS becomes a message naming what to install instead of a loader error before main.
#include <string>
#include <vector>

namespace gpubench::cuda {

/// The file name of the cuBLAS library this build expects (libcublas.so.<major>).
[[nodiscard]] const char* cublas_soname() noexcept;

/// Where the loader looks, in order: the system search (LD_LIBRARY_PATH, the executable's
/// RUNPATH, ld.so.cache), then NVIDIA's pip wheel layout next to the executable's Python
/// environment.
[[nodiscard]] std::vector<std::string> cublas_candidates();

/// Loads cuBLAS (once); throws no_device_error naming the library and the packages that provide
/// it when no candidate loads. Returns the dlopen handle.
void* load_cublas();

/// Tries to load cuBLAS without throwing; on failure `why` receives the reason.
[[nodiscard]] bool try_load_cublas(std::string& why) noexcept;

} // namespace gpubench::cuda
