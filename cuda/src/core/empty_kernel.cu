// The empty kernel (empty_kernel.hpp).
#include "gpubench/cuda/empty_kernel.hpp"
#include "gpubench/cuda/error.hpp"

namespace gpubench::cuda {
namespace {

__global__ void empty_kernel() {}

} // namespace

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  GPUBENCH_CUDA_TRY(cudaGetLastError());
}

} // namespace gpubench::cuda
