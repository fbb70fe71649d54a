#pragma once
// Move-only owners of device and pinned host memory. No raw cudaMalloc/cudaFree in workload code.
#include "gpubench/cuda/error.hpp"

#include <cstddef>
#include <utility>

namespace gpubench::cuda {

namespace detail {
void* device_allocate(std::size_t bytes);
void device_free(void* p) noexcept;
void* pinned_allocate(std::size_t bytes);
void pinned_free(void* p) noexcept;
} // namespace detail

/// Typed device allocation of `size` elements on the current device.
template <typename T>
class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(std::size_t size)
      : data_(static_cast<T*>(detail::device_allocate(size * sizeof(T)))), size_(size) {}
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      detail::device_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~device_buffer() { detail::device_free(data_); }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }

private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Page-locked host allocation (cudaMallocHost): fast, asynchronous DMA transfers.
template <typename T>
class pinned_buffer {
public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t size)
      : data_(static_cast<T*>(detail::pinned_allocate(size * sizeof(T)))), size_(size) {}
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  pinned_buffer(pinned_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    if (this != &o) {
      detail::pinned_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~pinned_buffer() { detail::pinned_free(data_); }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Free and total bytes on the current device.
struct memory_info {
  std::size_t free_bytes;
  std::size_t total_bytes;
};
memory_info device_memory_info();

/// Throws out_of_memory_error naming `what` with required vs free bytes when `bytes` (plus a
/// safety margin) cannot fit in the current device's free memory. Call before allocating.
void require_device_memory(std::size_t bytes, const char* what);

} // namespace gpubench::cuda
