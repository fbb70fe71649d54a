#include "gpubench/cuda/memory.hpp"

#include <fmt/format.h>

namespace gpubench::cuda {
namespace detail {

void* device_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  GPUBENCH_CUDA_TRY(cudaMalloc(&p, bytes));
  return p;
}

void device_free(void* p) noexcept {
  if (p != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaFree(p));
}

void* pinned_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t code = cudaMallocHost(&p, bytes);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    if (code == cudaErrorMemoryAllocation)
      throw out_of_memory_error(
          code, fmt::format("cannot allocate {} bytes of pinned host memory", bytes));
    throw_cuda_error(code, "cudaMallocHost", __FILE__, __LINE__);
  }
  return p;
}

void pinned_free(void* p) noexcept {
  if (p != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
}

} // namespace detail

memory_info device_memory_info() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GPUBENCH_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

void require_device_memory(std::size_t bytes, const char* what) {
  const auto info = device_memory_info();
  // Keep a margin for the context, cuBLAS workspaces and fragmentation.
  constexpr std::size_t margin = std::size_t{256} << 20;
  if (bytes + margin > info.free_bytes) {
    throw out_of_memory_error(
        cudaErrorMemoryAllocation,
        fmt::format("{} needs {:.3f} GB of device memory but only {:.3f} GB of {:.3f} GB is free",
                    what, static_cast<double>(bytes) / 1e9,
                    static_cast<double>(info.free_bytes) / 1e9,
                    static_cast<double>(info.total_bytes) / 1e9));
  }
}

} // namespace gpubench::cuda
