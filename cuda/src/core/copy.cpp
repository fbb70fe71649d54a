#include "gpubench/cuda/copy.hpp"

#include "gpubench/cuda/error.hpp"

namespace gpubench::cuda {

namespace {

void check(cudaError_t code, const char* call, const std::source_location& where) {
  if (code != cudaSuccess)
    throw_cuda_error(code, call, where.file_name(), static_cast<int>(where.line()));
}

} // namespace

void copy_to_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          std::source_location where) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s),
        "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream)", where);
}

void copy_to_host_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                        std::source_location where) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream)", where);
}

void copy_on_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          std::source_location where) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s),
        "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)", where);
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, std::source_location where) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
        "cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)", where);
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, std::source_location where) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
        "cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)", where);
}

void fill_bytes_async(void* dst, int value, std::size_t bytes, cudaStream_t s,
                      std::source_location where) {
  check(cudaMemsetAsync(dst, value, bytes, s), "cudaMemsetAsync(dst, value, bytes, stream)", where);
}

} // namespace gpubench::cuda
