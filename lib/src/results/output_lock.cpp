#include "gpubench/results/output_lock.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <tuple>
#include <unistd.h>
#include <utility>

namespace gpubench {

namespace fs = std::filesystem;

std::string own_file_refusal(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "is a symlink, and gpubench never follows one in this place";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (st.st_nlink != 1)
    return fmt::format("has {} hard links: writing it would change the file under its other "
                       "names",
                       static_cast<unsigned long long>(st.st_nlink));
  if (st.st_uid != ::geteuid())
    return fmt::format("belongs to another user (uid {}, this process runs as uid {}); gpubench "
                       "replaces only its own user's files",
                       st.st_uid, ::geteuid());
  return "";
}

int open_own_file(const std::string& path, std::string_view what) {
  const auto refuse = [&](const std::string& why) {
    return usage_error(fmt::format("the {} {}: {}; remove it or give another --output", what,
                                   clip(path, 200), why));
  };
  // A path that keeps changing between the two opens below is someone racing us: give up.
  for (int attempt = 0; attempt < 10; ++attempt) {
    // O_EXCL with O_CREAT never follows a link, dangling or not: it fails with EEXIST.
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST)
      throw usage_error(
          fmt::format("cannot create the {} {}: {}", what, clip(path, 200), std::strerror(errno)));
    fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue; // removed in between
      if (errno == ELOOP)
        throw refuse("is a symlink, and gpubench never follows one in this place");
      throw usage_error(
          fmt::format("cannot open the {} {}: {}", what, clip(path, 200), std::strerror(errno)));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw usage_error(
          fmt::format("cannot open the {} {}: {}", what, clip(path, 200), std::strerror(err)));
    }
    if (std::string why = own_file_refusal(st); !why.empty()) {
      ::close(fd);
      throw refuse(why);
    }
    return fd;
  }
  throw usage_error(
      fmt::format("cannot open the {} {}: it keeps being replaced", what, clip(path, 200)));
}

std::string output_lock_path(const std::string& path, std::string_view option) {
  const fs::path target(output_target(path, option));
  const fs::path folder = target.parent_path();
  const std::string name = "." + target.filename().string() + ".lock";
  return folder.empty() ? name : (folder / name).string();
}

namespace {

/// The lock files this process holds (device, inode). A POSIX record lock belongs to the process
/// and goes when any of its descriptors of the file is closed, so a writer nested in a command
/// that already holds the lock (the final write of a sweep) must neither open it again nor
/// release it. The pid is part of the key because a forked child inherits this set but not the
/// locks.
std::mutex held_mutex;
std::set<std::tuple<pid_t, dev_t, ino_t>> held_locks;

bool held_here(const std::string& lock) {
  struct stat st {};
  if (::lstat(lock.c_str(), &st) != 0) return false;
  const std::lock_guard guard(held_mutex);
  return held_locks.count({::getpid(), st.st_dev, st.st_ino}) != 0;
}

} // namespace

void unlink_if_still_named(int fd, const std::string& path) noexcept {
  struct stat held {};
  struct stat named {};
  if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
      named.st_dev == held.st_dev && named.st_ino == held.st_ino)
    ::unlink(path.c_str());
}

int open_locked_own_file(const std::string& path, std::string_view what,
                         const std::function<std::string(long)>& busy) {
  // The holder may release (and remove) the file between our open and our lock: then the lock is
  // on a file no one else will see, and the path is opened again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = open_own_file(path, what);
    struct flock want {};
    want.l_type = F_WRLCK;
    want.l_whence = SEEK_SET;
    // A process-wide record lock (F_GETLK can name its holder, which an OFD lock cannot); this
    // process must therefore keep the file open through this descriptor alone, as closing any
    // other descriptor of the file would drop the lock.
    if (::fcntl(fd, F_SETLK, &want) != 0) {
      const int err = errno;
      struct flock holder {};
      holder.l_type = F_WRLCK;
      holder.l_whence = SEEK_SET;
      const bool known = ::fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
      ::close(fd);
      if (err != EACCES && err != EAGAIN)
        throw usage_error(
            fmt::format("cannot lock the {} {}: {}", what, clip(path, 200), std::strerror(err)));
      throw usage_error(busy(known ? static_cast<long>(holder.l_pid) : -1L));
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
        named.st_dev == held.st_dev && named.st_ino == held.st_ino)
      return fd;
    ::close(fd);
  }
  throw usage_error(
      fmt::format("cannot lock the {} {}: it keeps being replaced", what, clip(path, 200)));
}

output_lock::output_lock(const std::string& path, std::string_view option) {
  if (path.empty() || path == "-") return;
  const std::string lock = output_lock_path(path, option);
  if (held_here(lock)) return; // the holder releases it
  fd_ = open_locked_own_file(lock, "lock file", [&](long pid) {
    return fmt::format("{} {}: another process{} is writing it (it holds the lock {}); wait for "
                       "it to end or give another {}",
                       option, clip(path, 200), pid >= 0 ? fmt::format(" (pid {})", pid) : "",
                       clip(lock, 200), option);
  });
  path_ = lock;
  struct stat held {};
  if (::fstat(fd_, &held) == 0) {
    const std::lock_guard guard(held_mutex);
    held_locks.insert({::getpid(), held.st_dev, held.st_ino});
  }
}

output_lock::output_lock(output_lock&& other) noexcept
    : path_(std::exchange(other.path_, {})), fd_(std::exchange(other.fd_, -1)) {}

output_lock& output_lock::operator=(output_lock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::exchange(other.path_, {});
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

output_lock::~output_lock() { release(); }

void output_lock::release() noexcept {
  if (fd_ < 0) return;
  // Removed while still held, and only if the name is still ours: a process that opened it
  // meanwhile finds its name gone once it has the lock, and opens a new one.
  unlink_if_still_named(fd_, path_);
  struct stat held {};
  if (::fstat(fd_, &held) == 0) {
    const std::lock_guard guard(held_mutex);
    held_locks.erase({::getpid(), held.st_dev, held.st_ino});
  }
  ::close(fd_);
  fd_ = -1;
  path_.clear();
}

} // namespace gpubench
