#pragma once
// cuBLAS is loaded when first used (dlopen), not linked: the pipeline alone needs it, so vecadd,
// augment, devices and doctor run on a machine that has only the NVIDIA driver, and a missing
// cuBLAS becomes a message naming what to install instead of a loader error before main.
#include "gpubench/cuda/library.hpp"

#include <string>
#include <vector>

namespace gpubench::cuda {

/// The file name of the cuBLAS library this build expects (libcublas.so.<major>).
[[nodiscard]] const char* cublas_soname() noexcept;

/// cuda_library_candidates for cuBLAS.
[[nodiscard]] std::vector<std::string> cublas_candidates();

/// Loads cuBLAS (once, through runtime_library, library.hpp); throws no_device_error naming the
/// library and the packages that provide it when no candidate loads.
void load_cublas();

/// Tries to load cuBLAS without throwing; on failure `why` receives the reason.
[[nodiscard]] bool try_load_cublas(std::string& why) noexcept;

/// cuBLASLt, which the pipeline's matrix products (with their fused epilogues) run on, loaded the
/// same way (cuda/src/pipeline/cublaslt_loader.cpp): its file name (libcublasLt.so.<major>), the
/// places tried, the loader (throws no_device_error naming the library and what to install) and
/// the non-throwing check. A file named by set_library_file(library_id::cublaslt) (the user's
/// GPUBENCH_CUBLASLT_LIBRARY) is the one file tried.
[[nodiscard]] const char* cublaslt_soname() noexcept;
[[nodiscard]] std::vector<std::string> cublaslt_candidates();
void load_cublaslt();
[[nodiscard]] bool try_load_cublaslt(std::string& why) noexcept;

} // namespace gpubench::cuda
