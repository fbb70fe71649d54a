#include "gpubench/cuda/runtime.hpp"

#include "gpubench/cuda/error.hpp"

namespace gpubench::cuda {

namespace {

void check(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) throw_cuda_error(code, call, file, line);
}

} // namespace

void copy_to_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          const char* file, int line) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s),
        "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream)", file, line);
}

void copy_to_host_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                        const char* file, int line) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream)", file, line);
}

void copy_on_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          const char* file, int line) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s),
        "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)", file, line);
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, const char* file, int line) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
        "cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)", file, line);
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, const char* file, int line) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
        "cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)", file, line);
}

void fill_bytes_async(void* dst, int value, std::size_t bytes, cudaStream_t s, const char* file,
                      int line) {
  check(cudaMemsetAsync(dst, value, bytes, s), "cudaMemsetAsync(dst, value, bytes, stream)", file,
        line);
}

void synchronize(cudaStream_t s, const char* file, int line) {
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize(stream)", file, line);
}

void synchronize_device(const char* file, int line) {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize()", file, line);
}

void synchronize_device_nothrow(const char* file, int line) noexcept {
  check_nothrow(cudaDeviceSynchronize(), "cudaDeviceSynchronize()", file, line);
}

int current_device() {
  int device = 0;
  GPUBENCH_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

void set_device(int device) { GPUBENCH_CUDA_TRY(cudaSetDevice(device)); }

} // namespace gpubench::cuda
