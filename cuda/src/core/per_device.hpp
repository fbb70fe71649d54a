#pragma once
// Host helpers every launcher shares: a value computed once per device (and key) and kept, and
// the grid that fills every SM of a device with a kernel's resident blocks. Internal to cuda/.
#include "gpubench/cuda/error.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace gpubench::cuda::detail {

/// The device the calling thread's CUDA calls go to.
inline int current_device_id() {
  int device = 0;
  GPUBENCH_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

/// Values asked of the runtime once per (device, key) and kept for the process: an attribute or
/// an occupancy asked at every launch would add host time to every timed sample.
template <class Key, class Value>
class per_device_cache {
public:
  /// The value for `key` on the current device: `make(device)` the first time, kept after.
  template <class Make>
  Value get(const Key& key, Make&& make) {
    const int device = current_device_id();
    const std::lock_guard lock(mutex_);
    const auto it = values_.find({device, key});
    if (it != values_.end()) return it->second;
    Value v = std::forward<Make>(make)(device);
    values_.emplace(std::pair{device, key}, v);
    return v;
  }
  /// The stored value for `key` on the current device, updated by `update(device, value&)`
  /// (default-constructed the first time) under the cache's lock.
  template <class Update>
  void update(const Key& key, Update&& update) {
    const int device = current_device_id();
    const std::lock_guard lock(mutex_);
    std::forward<Update>(update)(device, values_[{device, key}]);
  }

private:
  std::mutex mutex_;
  std::map<std::pair<int, Key>, Value> values_;
};

/// Resident blocks of `kernel` per SM at `threads` threads and `dynamic_shared` bytes, on the
/// current device (at least 1: a kernel that does not fit still launches one block).
inline int blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_shared = 0) {
  int per_sm = 0;
  GPUBENCH_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_shared));
  return std::max(1, per_sm);
}

/// The SMs of `device`.
inline int sm_count(int device) {
  int sms = 0;
  GPUBENCH_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

/// The grid that fills every SM of the current device once with `kernel`'s resident blocks.
inline int resident_grid(const void* kernel, int threads, std::size_t dynamic_shared = 0) {
  return std::max(1,
                  blocks_per_sm(kernel, threads, dynamic_shared) * sm_count(current_device_id()));
}

} // namespace gpubench::cuda::detail
