#pragma once
// One check for every cuBLAS and cuBLASLt status: CUBLAS_STATUS_ALLOC_FAILED as out of device
// memory (exit 3 with the OOM message), any other failure as a cuda_error naming the call.
#include <cublas_api.h>

namespace gpubench::cuda {

void check_blas(cublasStatus_t status, const char* call, const char* file, int line);

} // namespace gpubench::cuda

#define GPUBENCH_BLAS_TRY(call) ::gpubench::cuda::check_blas((call), #call, __FILE__, __LINE__)
