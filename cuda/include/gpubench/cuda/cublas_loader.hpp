#pragma once
// cuBLAS is loaded when first used (dlopen), not linked: the pipeline alone needs it, so vecadd,
// augment, devices and doctor run on a machine that has only the NVIDIA driver, and a missing
// cuBLAS becomes a message naming what to install instead of a loader error before main.
#include <string>
#include <vector>

namespace gpubench::cuda {

/// The file name of the cuBLAS library this build expects (libcublas.so.<major>).
[[nodiscard]] const char* cublas_soname() noexcept;

/// Where a loader of one of NVIDIA's CUDA libraries looks for the file `file` (of CUDA `major`),
/// in order: the system search (LD_LIBRARY_PATH, the executable's RUNPATH, ld.so.cache), NVIDIA's
/// pip wheel layout next to the executable's Python environment, then /usr/local/cuda/lib64.
[[nodiscard]] std::vector<std::string> cuda_library_candidates(const std::string& file, int major);

/// cuda_library_candidates for cuBLAS.
[[nodiscard]] std::vector<std::string> cublas_candidates();

/// Loads cuBLAS (once); throws no_device_error naming the library and the packages that provide
/// it when no candidate loads. Returns the dlopen handle.
void* load_cublas();

/// Tries to load cuBLAS without throwing; on failure `why` receives the reason.
[[nodiscard]] bool try_load_cublas(std::string& why) noexcept;

/// cuBLASLt, which the pipeline's matrix products (with their fused epilogues) run on, loaded the
/// same way (cuda/src/pipeline/cublaslt_loader.cpp): its file name (libcublasLt.so.<major>), the
/// places tried, the loader (throws no_device_error naming the library and what to install) and
/// the non-throwing check. GPUBENCH_CUBLASLT_LIBRARY, when set, is the one file tried.
[[nodiscard]] const char* cublaslt_soname() noexcept;
[[nodiscard]] std::vector<std::string> cublaslt_candidates();
void* load_cublaslt();
[[nodiscard]] bool try_load_cublaslt(std::string& why) noexcept;

} // namespace gpubench::cuda
