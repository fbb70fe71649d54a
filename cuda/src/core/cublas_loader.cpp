// Definitions of the cuBLAS entry points gpubench calls, forwarding to the library loaded on first
// use. The prototypes come from cublas_v2.h, so a signature that drifts fails to compile.
#include "gpubench/cuda/cublas_loader.hpp"

#include "core/blas_library.hpp"

#include <cublas_v2.h>

namespace gpubench::cuda {

namespace {

#define GPUBENCH_STR2(x) #x
#define GPUBENCH_STR(x) GPUBENCH_STR2(x)
constexpr const char* soname = "libcublas.so." GPUBENCH_STR(CUBLAS_VER_MAJOR);

const detail::blas_library cublas{"cuBLAS", soname, cublas_candidates, "the pipeline needs it",
                                  "",       "",     CUBLAS_VER_MAJOR};

} // namespace

const char* cublas_soname() noexcept { return soname; }

std::vector<std::string> cublas_candidates() {
  return cuda_library_candidates(soname, CUBLAS_VER_MAJOR);
}

void load_cublas() { (void)detail::load(cublas); }

bool try_load_cublas(std::string& why) noexcept { return detail::try_load(cublas, why); }

/// The entry point `name` of the loaded cuBLAS.
template <typename Fn>
Fn entry(const char* name) {
  return detail::entry<Fn>(cublas, name);
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
