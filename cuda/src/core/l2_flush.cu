// Two ways to empty L2 before a timed sample (--l2-flush; docs/methodology.md, "L2 flush").
// By reading (the default): a memset would leave the cache full of dirty lines whose write-back
// then lands inside the next timed region (tens of MB on an H200, as large as a 10M-element
// vecadd). Reading a buffer twice the L2's size evicts everything and leaves only clean lines.
// By writing: a memset of an L2-sized buffer, nvbench's flush, for figures taken by its
// convention; the timed work then pays for writing those dirty lines back.
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/error.hpp"

#include "core/per_device.hpp"

#include <algorithm>
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

constexpr int read_flush_threads = 256;

/// read_flush's grid on the current device: every SM full (the runtime's occupancy for this
/// kernel times the SM count), asked once per device.
unsigned read_flush_grid() {
  static detail::per_device_cache<int, unsigned> grids;
  return grids.get(0, [](int /*device*/) {
    return static_cast<unsigned>(
        detail::resident_grid(reinterpret_cast<const void*>(read_flush), read_flush_threads));
  });
}

} // namespace

l2_flusher::l2_flusher(int l2_bytes)
    // Twice the L2 so that no line of the previous sample's data survives the read flush.
    : buffer_(static_cast<std::size_t>(l2_bytes > 0 ? l2_bytes : 1) * 2 + 16),
      l2_bytes_(static_cast<std::size_t>(l2_bytes > 0 ? l2_bytes : 1)) {
  GPUBENCH_CUDA_TRY(cudaMemset(buffer_.data(), 0, buffer_.bytes()));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
}

void l2_flusher::flush_by_reading(cudaStream_t s) {
  const std::size_t vectors = (buffer_.bytes() - 16) / sizeof(uint4);
  read_flush<<<read_flush_grid(), read_flush_threads, 0, s>>>(
      reinterpret_cast<const uint4*>(buffer_.data()), vectors,
      reinterpret_cast<unsigned*>(buffer_.data() + vectors * 16));
  GPUBENCH_CHECK_LAUNCH("read_flush");
}

// Zeros, as nvbench writes: the buffer stays all zeros, which read_flush's sink relies on.
void l2_flusher::flush_by_writing(cudaStream_t s) {
  GPUBENCH_CUDA_TRY(cudaMemsetAsync(buffer_.data(), 0, l2_bytes_, s));
  GPUBENCH_CHECK_LAUNCH("write_flush (memset)");
}

} // namespace gpubench::cuda
