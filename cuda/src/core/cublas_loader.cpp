// Definitions of the cuBLAS entry points gpubench calls, forwarding to the library loaded on first
// use. The prototypes come from cublas_v2.h, so a signature that drifts fails to compile.
#include "gpubench/cuda/cublas_loader.hpp"

#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/library.hpp"

#include <cublas_v2.h>
#include <fmt/format.h>

namespace gpubench::cuda {

namespace {

#define GPUBENCH_STR2(x) #x
#define GPUBENCH_STR(x) GPUBENCH_STR2(x)
constexpr const char* soname = "libcublas.so." GPUBENCH_STR(CUBLAS_VER_MAJOR);

/// cuBLAS, opened by the first caller.
const runtime_library& library() { return open_library(cublas_candidates()); }

template <typename Fn>
Fn entry(const char* name) {
  load_cublas();
  const auto fn = library().symbol<Fn>(name);
  if (fn == nullptr)
    throw no_device_error(fmt::format("cuBLAS ({}) has no entry point {}", soname, name));
  return fn;
}

} // namespace

const char* cublas_soname() noexcept { return soname; }

std::vector<std::string> cublas_candidates() {
  return cuda_library_candidates(soname, CUBLAS_VER_MAJOR);
}

void load_cublas() {
  const runtime_library& lib = library();
  if (!lib.loaded())
    throw no_device_error(fmt::format(
        "cuBLAS ({}) was not found; the pipeline needs it. Install it with pip "
        "(pip install nvidia-cublas=={}.*), or NVIDIA's Debian package libcublas-{}-0, or point "
        "LD_LIBRARY_PATH at a CUDA Toolkit's lib64. Tried: {}",
        soname, CUBLAS_VER_MAJOR, CUBLAS_VER_MAJOR, lib.tried()));
}

bool try_load_cublas(std::string& why) noexcept {
  try {
    load_cublas();
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

} // namespace gpubench::cuda

using gpubench::cuda::entry;

// The entry points below are the ones cublas_v2.h maps gpubench's calls to.
extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  return entry<decltype(&cublasCreate_v2)>("cublasCreate_v2")(handle);
}
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  return entry<decltype(&cublasDestroy_v2)>("cublasDestroy_v2")(handle);
}
cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return entry<decltype(&cublasSetStream_v2)>("cublasSetStream_v2")(handle, stream);
}
cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace,
                                                  size_t bytes) {
  return entry<decltype(&cublasSetWorkspace_v2)>("cublasSetWorkspace_v2")(handle, workspace, bytes);
}
cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return entry<decltype(&cublasSetMathMode)>("cublasSetMathMode")(handle, mode);
}
cublasStatus_t CUBLASWINAPI cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
  return entry<decltype(&cublasSetAtomicsMode)>("cublasSetAtomicsMode")(handle, mode);
}
cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle,
                                                    cublasPointerMode_t mode) {
  return entry<decltype(&cublasSetPointerMode_v2)>("cublasSetPointerMode_v2")(handle, mode);
}
const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  return entry<decltype(&cublasGetStatusName)>("cublasGetStatusName")(status);
}
cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C,
                                           int ldc) {
  return entry<decltype(&cublasSgemm_v2)>("cublasSgemm_v2")(handle, transa, transb, m, n, k, alpha,
                                                            A, lda, B, ldb, beta, C, ldc);
}

} // extern "C"
