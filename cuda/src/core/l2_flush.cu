// L2 flush by reading: a memset would leave the cache full of dirty lines whose write-back then
// lands inside the next timed region (tens of MB on an H200, as large as a 10M-element vecadd).
// Reading an L2-sized buffer evicts everything and leaves only clean lines behind.
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/error.hpp"

#include <cstdint>

namespace gpubench::cuda {
namespace {

__global__ void read_flush(const uint4* __restrict__ data, std::size_t n, unsigned* sink) {
  uint4 acc{0, 0, 0, 0};
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const uint4 v = data[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
  }
  // The buffer is all zeros, so this store never happens; it keeps the loads alive.
  if ((acc.x | acc.y | acc.z | acc.w) == 0xFFFFFFFFU) *sink = acc.x;
}

} // namespace

l2_flusher::l2_flusher(int l2_bytes)
    // Twice the L2 so that no line of the previous sample's data survives the flush.
    : buffer_(static_cast<std::size_t>(l2_bytes > 0 ? l2_bytes : 1) * 2 + 16) {
  GPUBENCH_CUDA_TRY(cudaMemset(buffer_.data(), 0, buffer_.bytes()));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
}

void l2_flusher::flush(cudaStream_t s) {
  const std::size_t vectors = (buffer_.bytes() - 16) / sizeof(uint4);
  read_flush<<<1024, 256, 0, s>>>(reinterpret_cast<const uint4*>(buffer_.data()), vectors,
                                  reinterpret_cast<unsigned*>(buffer_.data() + vectors * 16));
  GPUBENCH_CHECK_LAUNCH("read_flush");
}

} // namespace gpubench::cuda
