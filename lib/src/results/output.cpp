#include "gpubench/results/output.hpp"

#include "gpubench/engine/errors.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubench {

namespace fs = std::filesystem;

namespace {

fs::path folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a regular file";
}

/// The file the write lands in: `path`, or the regular file a symlink at `path` points to (so the
/// link survives the rename). Throws usage_error when what exists there is not a regular file.
std::string write_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return path; // a new file (or a dangling symlink: replaced)
  if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0) return path;
    if (S_ISREG(st.st_mode)) {
      std::error_code ec;
      const fs::path target = fs::canonical(path, ec);
      if (!ec) return target.string();
    }
  }
  if (S_ISDIR(st.st_mode))
    throw usage_error(fmt::format("--output {}: is a folder, expected a file name", path));
  if (!S_ISREG(st.st_mode))
    throw usage_error(fmt::format("--output {}: exists and is {}, not a regular file; gpubench "
                                  "replaces its output by a rename and will not replace it (write "
                                  "to a file, or use --output - for stdout)",
                                  path, kind_of(st.st_mode)));
  return path;
}

// The temporary file of the atomic write in progress, for the signal handler: a fixed buffer and
// a lock-free flag, both async-signal-safe to read.
char pending_temp[4096];
std::atomic<bool> pending_temp_set{false};

void set_pending(const std::string& tmp) noexcept {
  if (tmp.size() >= sizeof(pending_temp)) return;
  std::memcpy(pending_temp, tmp.c_str(), tmp.size() + 1);
  pending_temp_set.store(true);
}

void clear_pending() noexcept { pending_temp_set.store(false); }

/// 0666 less the umask (umask can only be read by setting it; nothing else runs meanwhile).
mode_t new_file_mode() {
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return 0666 & ~mask;
}

} // namespace

void remove_pending_temp_file() noexcept {
  if (pending_temp_set.exchange(false)) ::unlink(pending_temp);
}

void check_output_path(const std::string& path) {
  if (path == "-") return;
  if (path.empty())
    throw usage_error("--output: the path is empty (an unset variable?); give a file name, or - "
                      "for stdout");
  const std::string target = write_target(path);
  const fs::path folder = folder_of(target);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw usage_error(
        fmt::format("--output {}: the folder '{}' does not exist", path, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw usage_error(
        fmt::format("--output {}: the folder '{}' is not writable", path, folder.string()));
  if (fs::exists(fs::path(target), ec) && ::access(target.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("--output {}: the file exists and is not writable", path));
  // access() says yes to root everywhere and knows nothing of file systems that refuse new files
  // (/proc, read-only mounts): create and remove the kind of temp file the final write will use.
  std::string probe = (folder / ("." + fs::path(target).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw usage_error(fmt::format("--output {}: cannot create a file in '{}': {}", path,
                                  folder.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string target = write_target(path);
  struct stat existing {};
  const mode_t mode =
      ::stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : new_file_mode();
  std::string tmpl =
      (folder_of(target) / ("." + fs::path(target).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw usage_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  set_pending(tmpl);
  const auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    clear_pending();
    throw usage_error(fmt::format("cannot write {} ({}): {}", path, what, std::strerror(err)));
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600: give the file the mode it had, or the one the umask asks for.
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) fail("sync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    clear_pending();
    throw usage_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  if (::rename(tmpl.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    clear_pending();
    throw usage_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  clear_pending();
}

void write_stdout(std::string_view text) {
  std::cout.flush(); // anything written through the stream before comes first
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw usage_error(fmt::format("cannot write to stdout: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

void deliver(const std::string& output_path, const std::function<std::string()>& file_text,
             const std::function<std::string()>& stdout_text) {
  if (output_path == "-") {
    write_stdout(file_text());
    return;
  }
  if (!output_path.empty()) write_file_atomically(output_path, file_text());
  write_stdout(stdout_text());
}

} // namespace gpubench
