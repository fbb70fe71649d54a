#pragma once
// Host memory of either kind behind one type, so workloads can sweep pinned vs pageable.
#include "gpubench/cuda/memory.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace gpubench {

enum class host_memory { pinned, pageable };

class host_buffer {
public:
  host_buffer(std::size_t bytes, host_memory kind);
  [[nodiscard]] std::byte* data() noexcept {
    return kind_ == host_memory::pinned ? pinned_.data() : pageable_.get();
  }
  [[nodiscard]] const std::byte* data() const noexcept {
    return kind_ == host_memory::pinned ? pinned_.data() : pageable_.get();
  }
  template <typename T>
  T* as() noexcept {
    return reinterpret_cast<T*>(data());
  }
  template <typename T>
  const T* as() const noexcept {
    return reinterpret_cast<const T*>(data());
  }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

private:
  host_memory kind_;
  std::size_t bytes_;
  cuda::pinned_buffer<std::byte> pinned_;
  std::unique_ptr<std::byte[]> pageable_;
};

/// Throws cuda::out_of_memory_error naming `what` with required vs available bytes when the host
/// cannot provide `bytes` (Linux overcommits, so a failed allocation would otherwise surface as a
/// killed process when the memory is first touched).
void require_host_memory(std::size_t bytes, std::string_view what);

} // namespace gpubench
