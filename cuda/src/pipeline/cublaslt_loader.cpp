// Definitions of the cuBLASLt entry points the pipeline's model and gemm call, forwarding to the
// library loaded on first use (as cuda/src/core/cublas_loader.cpp does for cuBLAS). The prototypes
// come from cublasLt.h, so a signature that drifts fails to compile. Each entry point resolves its
// symbol once and keeps it: cublasLtMatmul is called a dozen times a training step, and a symbol
// lookup per call would be host time the pipeline's launch-bound rows measure.
#include "gpubench/cuda/cublas_loader.hpp"

#include "core/blas_library.hpp"

#include <cublasLt.h>

namespace gpubench::cuda {

namespace {

#define GPUBENCH_LT_STR2(x) #x
#define GPUBENCH_LT_STR(x) GPUBENCH_LT_STR2(x)
constexpr const char* lt_soname = "libcublasLt.so." GPUBENCH_LT_STR(CUBLAS_VER_MAJOR);

const detail::blas_library cublaslt{
    "cuBLASLt",
    lt_soname,
    cublaslt_candidates,
    "the pipeline runs its matrix products on it",
    ", which ships libcublas and libcublasLt",
    "; the pipeline needs cuBLAS " GPUBENCH_LT_STR(CUBLAS_VER_MAJOR) " or later",
    CUBLAS_VER_MAJOR};

} // namespace

const char* cublaslt_soname() noexcept { return lt_soname; }

std::vector<std::string> cublaslt_candidates() {
  return library_candidates(library_id::cublaslt,
                            cuda_library_candidates(lt_soname, CUBLAS_VER_MAJOR));
}

void load_cublaslt() { (void)detail::load(cublaslt); }

bool try_load_cublaslt(std::string& why) noexcept { return detail::try_load(cublaslt, why); }

/// The entry point `name` of the loaded cuBLASLt; throws no_device_error when the library (an
/// older one) lacks it.
template <typename Fn>
Fn lt_entry(const char* name) {
  return detail::entry<Fn>(cublaslt, name);
}

} // namespace gpubench::cuda

using gpubench::cuda::lt_entry;

// Resolved on the first call (a failed lookup throws and is tried again next call), then reused.
#define GPUBENCH_LT_FORWARD(name, ...)                                                             \
  static const auto fn = lt_entry<decltype(&name)>(#name);                                         \
  return fn(__VA_ARGS__)

extern "C" {

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* handle) {
  GPUBENCH_LT_FORWARD(cublasLtCreate, handle);
}
cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t handle) {
  GPUBENCH_LT_FORWARD(cublasLtDestroy, handle);
}
const char* CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t status) {
  GPUBENCH_LT_FORWARD(cublasLtGetStatusName, status);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                                     cublasComputeType_t compute,
                                                     cudaDataType_t scale) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulDescCreate, desc, compute, scale);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulDescDestroy, desc);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t size) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulDescSetAttribute, desc, attr, buf, size);
}
cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout,
                                                       cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  GPUBENCH_LT_FORWARD(cublasLtMatrixLayoutCreate, layout, type, rows, cols, ld);
}
cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  GPUBENCH_LT_FORWARD(cublasLtMatrixLayoutDestroy, layout);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulPreferenceCreate, pref);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulPreferenceDestroy, pref);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
    size_t size) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulPreferenceSetAttribute, pref, attr, buf, size);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int* returned) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulAlgoGetHeuristic, handle, desc, a, b, c, d, pref, requested,
                      results, returned);
}
cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                           const void* alpha, const void* a,
                                           cublasLtMatrixLayout_t a_layout, const void* b,
                                           cublasLtMatrixLayout_t b_layout, const void* beta,
                                           const void* c, cublasLtMatrixLayout_t c_layout, void* d,
                                           cublasLtMatrixLayout_t d_layout,
                                           const cublasLtMatmulAlgo_t* algo, void* workspace,
                                           size_t workspace_bytes, cudaStream_t stream) {
  GPUBENCH_LT_FORWARD(cublasLtMatmul, handle, desc, alpha, a, a_layout, b, b_layout, beta, c,
                      c_layout, d, d_layout, algo, workspace, workspace_bytes, stream);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoConfigGetAttribute(
    const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
    size_t size, size_t* written) {
  GPUBENCH_LT_FORWARD(cublasLtMatmulAlgoConfigGetAttribute, algo, attr, buf, size, written);
}

} // extern "C"
