#pragma once
// The CUDA runtime calls host code makes besides the RAII types: copies, fills, waits and the
// current device. Each is one runtime call, checked, so that lib/ never calls the runtime itself.
// A failure throws cuda_error naming the caller's file and line (the default arguments
// __builtin_FILE() and __builtin_LINE() are taken where the call is written), as
// GPUBENCH_CUDA_TRY at the call would. Host compilers only (g++, clang): not for .cu files.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpubench::cuda {

/// cudaMemcpyAsync host to device, enqueued on `s`.
void copy_to_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// cudaMemcpyAsync device to host, enqueued on `s`.
void copy_to_host_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// cudaMemcpyAsync device to device, enqueued on `s`.
void copy_on_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// cudaMemcpy host to device: ordered on the legacy default stream, returns once it is done.
void copy_to_device(void* dst, const void* src, std::size_t bytes,
                    const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// cudaMemcpy device to host: ordered on the legacy default stream, returns once it is done.
void copy_to_host(void* dst, const void* src, std::size_t bytes,
                  const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// cudaMemsetAsync: every byte of `bytes` at `dst` (device memory) set to `value`, on `s`.
void fill_bytes_async(void* dst, int value, std::size_t bytes, cudaStream_t s,
                      const char* file = __builtin_FILE(), int line = __builtin_LINE());

/// Waits until everything enqueued on `s` has run (cudaStreamSynchronize).
void synchronize(cudaStream_t s, const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// Waits until everything enqueued on the current device has run (cudaDeviceSynchronize).
void synchronize_device(const char* file = __builtin_FILE(), int line = __builtin_LINE());
/// For destructors: synchronize_device() that logs a failure to stderr instead of throwing.
void synchronize_device_nothrow(const char* file = __builtin_FILE(),
                                int line = __builtin_LINE()) noexcept;
/// The calling thread's current device (cudaGetDevice).
int current_device();
/// Makes `device` the calling thread's current device (cudaSetDevice); a new thread starts on
/// device 0. scoped_device (stream.hpp) restores the previous one.
void set_device(int device);

} // namespace gpubench::cuda
