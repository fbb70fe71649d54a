#include "gpubench/engine/host_buffer.hpp"

#include "gpubench/core/errors.hpp"

#include <fmt/format.h>

#include <fstream>
#include <new>
#include <string>
#include <unistd.h>

namespace gpubench {

host_buffer::host_buffer(std::size_t bytes, host_memory kind) : kind_(kind), bytes_(bytes) {
  if (kind == host_memory::pinned) {
    pinned_ = cuda::pinned_buffer<std::byte>(bytes);
    return;
  }
  try {
    pageable_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
  } catch (const std::bad_alloc&) {
    throw host_memory_error(fmt::format("cannot allocate {} bytes of pageable host memory", bytes));
  }
}

namespace {
/// MemAvailable from /proc/meminfo (what can be allocated without swapping), else free pages.
std::size_t available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    std::size_t kb = 0;
    std::string unit;
    meminfo >> kb >> unit;
    if (key == "MemAvailable:") return kb * 1024;
  }
  return static_cast<std::size_t>(::sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}
} // namespace

void require_host_memory(std::size_t bytes, std::string_view what) {
  const std::size_t avail = available_host_bytes();
  if (bytes > avail)
    throw host_memory_error(
        fmt::format("{} needs {:.3f} GB of host memory but only {:.3f} GB is available", what,
                    static_cast<double>(bytes) / 1e9, static_cast<double>(avail) / 1e9));
}

} // namespace gpubench
