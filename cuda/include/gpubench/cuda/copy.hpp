#pragma once
// Copies and fills for host code: each is one CUDA runtime call, checked, so that lib/ moves
// memory without calling the runtime itself. A failure throws cuda_error naming the caller's file
// and line (the default argument), as GPUBENCH_CUDA_TRY at the call would.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <source_location>

namespace gpubench::cuda {

/// cudaMemcpyAsync host to device, enqueued on `s`.
void copy_to_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          std::source_location where = std::source_location::current());
/// cudaMemcpyAsync device to host, enqueued on `s`.
void copy_to_host_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                        std::source_location where = std::source_location::current());
/// cudaMemcpyAsync device to device, enqueued on `s`.
void copy_on_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s,
                          std::source_location where = std::source_location::current());
/// cudaMemcpy host to device: ordered on the legacy default stream, returns once it is done.
void copy_to_device(void* dst, const void* src, std::size_t bytes,
                    std::source_location where = std::source_location::current());
/// cudaMemcpy device to host: ordered on the legacy default stream, returns once it is done.
void copy_to_host(void* dst, const void* src, std::size_t bytes,
                  std::source_location where = std::source_location::current());
/// cudaMemsetAsync: every byte of `bytes` at `dst` (device memory) set to `value`, on `s`.
void fill_bytes_async(void* dst, int value, std::size_t bytes, cudaStream_t s,
                      std::source_location where = std::source_location::current());

} // namespace gpubench::cuda
