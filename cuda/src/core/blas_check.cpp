#include "core/blas_check.hpp"

#include "gpubench/cuda/error.hpp"

#include <cublasLt.h>

#include <exception>
#include <string>

namespace gpubench::cuda {

void check_blas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::string name = std::to_string(static_cast<int>(status));
  try { // the status's name from cuBLASLt, where it loads (a cuBLAS-only failure need not)
    name = cublasLtGetStatusName(status);
  } catch (const std::exception&) {
  }
  const std::string what =
      std::string(call) + " failed: " + name + " at " + file + ":" + std::to_string(line);
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw out_of_memory_error(cudaErrorMemoryAllocation, what);
  throw cuda_error(cudaErrorUnknown, what);
}

} // namespace gpubench::cuda
