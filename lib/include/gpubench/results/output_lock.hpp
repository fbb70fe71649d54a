#pragma once
// Files gpubench creates beside an output (its journal, its lock) and the one-writer lock of an
// output: nothing planted in their place (a symlink, a hard link, another user's file) can
// redirect a write. docs/reliability.md, "Files that cannot be turned".
#include <functional>
#include <string>
#include <string_view>

#include <sys/stat.h>

namespace gpubench {

/// Why this process may not write or replace the existing file whose lstat() is `st`, "" when it
/// may: it must be a regular file with one link, owned by the running user. A symlink, a hard link
/// to another name or another user's file in a shared folder is how a hostile user would turn a
/// write by root against a file of their choosing.
std::string own_file_refusal(const struct stat& st);

/// Opens `path` for reading and writing, creating it (0666 less the umask) when it is absent,
/// without ever following a link: an existing file is opened only if own_file_refusal() allows it.
/// Throws usage_error "WHAT PATH: REASON; remove it or give another --output" otherwise. The
/// descriptor is the caller's to close.
int open_own_file(const std::string& path, std::string_view what);

/// open_own_file, then a POSIX write lock on the file, opened again while the path keeps naming
/// another file than the one locked (its holder removed it meanwhile). A holder is a usage_error
/// with the text busy(its pid, -1 when unknown). The descriptor is the caller's: closing it, or any
/// other descriptor of the file in this process, releases the lock.
int open_locked_own_file(const std::string& path, std::string_view what,
                         const std::function<std::string(long)>& busy);

/// Removes `path` if it still names the file open as `fd` (not one that replaced it meanwhile).
void unlink_if_still_named(int fd, const std::string& path) noexcept;

/// The lock that makes one process the writer of an output file, for every command that writes
/// one (the benchmarks and run, rerun, report, compare, completions). It is a POSIX record lock on
/// `.NAME.lock` in the folder of the file the output resolves to (a symlink the user named is
/// followed first), so an output named through a symlink and through its target share one lock;
/// a hard link to an existing output is refused by own_file_refusal() before any write. Another
/// holder is a usage_error naming its pid. The lock file is removed when the lock is released
/// (a killed process leaves it, harmless: the kernel released its lock).
class output_lock {
public:
  output_lock() = default;
  /// Locks the output `path` of option `option` ("--output"); "" and "-" (stdout) lock nothing.
  output_lock(const std::string& path, std::string_view option);
  output_lock(const output_lock&) = delete;
  output_lock& operator=(const output_lock&) = delete;
  output_lock(output_lock&& other) noexcept;
  output_lock& operator=(output_lock&& other) noexcept;
  ~output_lock();

  /// The lock file ("" when nothing is locked).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  void release() noexcept;
  std::string path_;
  int fd_ = -1;
};

/// The lock file of output `path` (what output_lock takes): `.NAME.lock` beside the file `path`
/// resolves to.
std::string output_lock_path(const std::string& path, std::string_view option = "--output");

} // namespace gpubench
