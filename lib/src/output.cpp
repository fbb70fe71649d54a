#include "gpubench/output.hpp"

#include "gpubench/errors.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubench {

namespace fs = std::filesystem;

namespace {
fs::path folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}
} // namespace

void check_output_path(const std::string& path) {
  if (path.empty()) throw usage_error("--output: the path is empty");
  const fs::path folder = folder_of(path);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw usage_error(
        fmt::format("--output {}: the folder '{}' does not exist", path, folder.string()));
  if (fs::is_directory(fs::path(path), ec))
    throw usage_error(fmt::format("--output {}: is a folder, expected a file name", path));
  if (::access(folder.c_str(), W_OK) != 0)
    throw usage_error(
        fmt::format("--output {}: the folder '{}' is not writable", path, folder.string()));
  if (fs::exists(fs::path(path), ec) && ::access(path.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("--output {}: the file exists and is not writable", path));
  // access() says yes to root everywhere and knows nothing of file systems that refuse new files
  // (/proc, read-only mounts): create and remove the kind of temp file the final write will use.
  std::string probe = (folder / ("." + fs::path(path).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw usage_error(fmt::format("--output {}: cannot create a file in '{}': {}", path,
                                  folder.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const fs::path target(path);
  std::string tmpl = (folder_of(path) / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw usage_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  const auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
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
  // mkstemp creates 0600; results are ordinary files.
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) fail("sync");
  if (::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw usage_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw usage_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
}

} // namespace gpubench
