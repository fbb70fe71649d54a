#include "gpubench/check/gpu_turn.hpp"

#include "gpubench/core/errors.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>

namespace gpubench {

gpu_turn::gpu_turn(const std::string& uuid) {
  if (uuid.empty()) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // sun_path[0] stays '\0': the abstract namespace.
  const std::string name = "gpubench-check-" + uuid;
  const std::size_t len = std::min(name.size(), sizeof(addr.sun_path) - 1);
  std::memcpy(addr.sun_path + 1, name.data(), len);
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
  while (!interrupt_requested()) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return; // no socket: measure without the hold rather than not at all
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), size) == 0) {
      fd_ = fd;
      return;
    }
    const int err = errno;
    ::close(fd);
    if (err != EADDRINUSE) return;
    waited_ = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

gpu_turn::~gpu_turn() {
  if (fd_ >= 0) ::close(fd_);
}

} // namespace gpubench
