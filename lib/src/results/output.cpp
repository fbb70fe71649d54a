#include "gpubench/results/output.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/output_lock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>
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

/// Most links followed from an output path (the kernel's own limit, MAXSYMLINKS).
constexpr int max_link_hops = 40;

/// A path as messages quote it: clipped and with control characters escaped.
std::string shown(const std::string& path) { return clip(path, 200); }

[[noreturn]] void throw_link_loop(const std::string& path, std::string_view option) {
  throw usage_error(fmt::format("{} {}: is a symlink loop (or a chain of more than {} links); "
                                "give a file name",
                                option, shown(path), max_link_hops));
}

/// The file a dangling symlink at `path` names, following every link of the chain: the file a
/// shell's `>` would create. Its folder is checked by the caller.
std::string dangling_link_target(const std::string& path, std::string_view option) {
  std::string current = path;
  for (int hop = 0; hop < max_link_hops; ++hop) {
    std::error_code ec;
    const fs::path link = fs::read_symlink(current, ec);
    if (ec) return current;
    const fs::path next = link.is_absolute() ? link : fs::path(current).parent_path() / link;
    current = next.string();
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
  }
  throw_link_loop(path, option);
}

/// Throws usage_error unless the symlink `path` (lstat `link`) may be followed: it is the running
/// user's, or its folder's owner's, or its folder is not a shared one (sticky and writable by
/// all). The kernel's protected_symlinks rule, kept whatever the sysctl says: in /tmp a link
/// another user planted where root writes would otherwise choose the file root replaces.
void check_link_may_be_followed(const std::string& path, const struct stat& link,
                                std::string_view option) {
  if (link.st_uid == ::geteuid()) return;
  struct stat dir {};
  const fs::path folder = fs::path(path).parent_path();
  if (::stat(folder.empty() ? "." : folder.c_str(), &dir) != 0) return;
  const bool shared = (dir.st_mode & S_ISVTX) != 0 && (dir.st_mode & S_IWOTH) != 0;
  if (!shared || link.st_uid == dir.st_uid) return;
  throw usage_error(fmt::format("{} {}: is a symlink of another user (uid {}) in a shared folder "
                                "(sticky, writable by all); gpubench follows such a link only "
                                "when it is yours or the folder owner's: remove it or give "
                                "another {}",
                                option, shown(path), link.st_uid, option));
}

} // namespace

std::string output_target(const std::string& path, std::string_view option) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return path; // a new file
  std::string target = path;
  if (S_ISLNK(st.st_mode)) {
    check_link_may_be_followed(path, st, option);
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ELOOP) throw_link_loop(path, option);
      return dangling_link_target(path, option); // created through the link, as `>` would
    }
    if (S_ISREG(st.st_mode)) {
      std::error_code ec;
      const fs::path canonical = fs::canonical(path, ec);
      if (!ec) target = canonical.string();
    }
  }
  if (S_ISDIR(st.st_mode))
    throw usage_error(fmt::format("{} {}: is a folder, expected a file name", option, shown(path)));
  if (!S_ISREG(st.st_mode))
    throw usage_error(fmt::format("{} {}: exists and is {}, not a regular file; gpubench "
                                  "replaces its output by a rename and will not replace it (write "
                                  "to a file{})",
                                  option, shown(path), kind_of(st.st_mode),
                                  option == "--output" ? ", or use --output - for stdout" : ""));
  if (const std::string why = own_file_refusal(st); !why.empty())
    throw usage_error(
        fmt::format("{} {}: {}; remove it or give another {}", option, shown(target), why, option));
  return target;
}

namespace {

/// What identifies the file `path` names: its device and inode when it exists, else its absolute
/// path once every symlink is resolved (the file that writing `path` would create).
std::string file_key(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0)
    return fmt::format("inode {}:{}", static_cast<unsigned long long>(st.st_dev),
                       static_cast<unsigned long long>(st.st_ino));
  std::string target = path;
  try {
    target = output_target(path, "--output");
  } catch (const usage_error&) {
    // a loop or a special file: compared by the path as given
  }
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(target, ec), ec);
  if (ec) resolved = fs::absolute(target, ec).lexically_normal();
  return "path " + resolved.string();
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

void check_output_path(const std::string& path, std::string_view option) {
  if (path == "-") return;
  if (path.empty())
    throw usage_error(fmt::format("{}: the path is empty (an unset variable?); give a file name{}",
                                  option, option == "--output" ? ", or - for stdout" : ""));
  const std::string target = output_target(path, option);
  const fs::path folder = folder_of(target);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw usage_error(fmt::format("{} {}: the folder '{}' does not exist", option, shown(path),
                                  shown(folder.string())));
  if (::access(folder.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("{} {}: the folder '{}' is not writable", option, shown(path),
                                  shown(folder.string())));
  if (fs::exists(fs::path(target), ec) && ::access(target.c_str(), W_OK) != 0)
    throw usage_error(
        fmt::format("{} {}: the file exists and is not writable", option, shown(path)));
  // access() says yes to root everywhere and knows nothing of file systems that refuse new files
  // (/proc, read-only mounts): create and remove the kind of temp file the final write will use.
  std::string probe = (folder / ("." + fs::path(target).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw usage_error(fmt::format("{} {}: cannot create a file in '{}': {}", option, shown(path),
                                  shown(folder.string()), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

bool same_file(const std::string& a, const std::string& b) { return file_key(a) == file_key(b); }

void check_output_is_not_an_input(const std::string& path, std::string_view option,
                                  const std::vector<named_input>& inputs) {
  if (path.empty() || path == "-") return;
  const std::string key = file_key(path);
  for (const auto& in : inputs) {
    if (in.path.empty() || in.path == "-" || file_key(in.path) != key) continue;
    throw usage_error(fmt::format("{} {}: is the same file as the {} '{}'; writing it would "
                                  "destroy that input: give {} another file",
                                  option, shown(path), in.what, shown(in.path), option));
  }
}

std::optional<std::pair<std::size_t, std::size_t>>
first_duplicate(const std::vector<std::string>& paths) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t j = 0; j < paths.size(); ++j) {
    const auto [it, inserted] = seen.emplace(file_key(paths[j]), j);
    if (!inserted) return std::make_pair(it->second, j);
  }
  return std::nullopt;
}

std::string printable_message(std::string_view text) {
  // A word longer than any real one is an echoed argument: clipped as quoted text is everywhere.
  constexpr std::size_t max_word = 200;
  constexpr std::size_t max_line = 1000;
  std::string out;
  std::size_t line_start = 0;
  while (line_start <= text.size()) {
    const std::size_t nl = std::min(text.find('\n', line_start), text.size());
    const std::string_view line = text.substr(line_start, nl - line_start);
    std::string safe;
    std::size_t word_start = 0;
    while (word_start <= line.size()) {
      const std::size_t sp = std::min(line.find(' ', word_start), line.size());
      if (word_start > 0) safe += ' ';
      safe += clip(line.substr(word_start, sp - word_start), max_word);
      word_start = sp + 1;
    }
    out += clip(safe, max_line);
    if (nl == text.size()) break;
    out += '\n';
    line_start = nl + 1;
  }
  return out;
}

namespace {

/// Writes all of `text` to `fd`; 0, or the errno of the failed write.
int write_all(int fd, std::string_view text) noexcept {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

/// The atomic write, `fill` writing the content to the temporary file's descriptor and returning
/// 0 or the errno of its failure.
void write_atomically(const std::string& path, std::string_view option,
                      const std::function<int(int)>& fill) {
  // One writer per output: held for this write, unless this process already holds it (a sweep
  // holds it from its first point; output_lock).
  const output_lock lock(path, option);
  const std::string target = output_target(path, option);
  struct stat existing {};
  const mode_t mode =
      ::stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : new_file_mode();
  std::string tmpl =
      (folder_of(target) / ("." + fs::path(target).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw usage_error(fmt::format("cannot write {}: {}", shown(path), std::strerror(errno)));
  set_pending(tmpl);
  const auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    clear_pending();
    throw usage_error(
        fmt::format("cannot write {} ({}): {}", shown(path), what, std::strerror(err)));
  };
  int written = 0;
  try {
    written = fill(fd);
  } catch (...) { // the content could not be made (out of memory): no temporary file stays
    ::close(fd);
    ::unlink(tmpl.c_str());
    clear_pending();
    throw;
  }
  if (written != 0) {
    errno = written;
    fail("write");
  }
  // mkstemp creates 0600: give the file the mode it had, or the one the umask asks for.
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) fail("sync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    clear_pending();
    throw usage_error(fmt::format("cannot write {}: {}", shown(path), std::strerror(err)));
  }
  if (::rename(tmpl.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    clear_pending();
    throw usage_error(fmt::format("cannot write {}: {}", shown(path), std::strerror(err)));
  }
  clear_pending();
}

} // namespace

void write_file_atomically(const std::string& path, const std::string& text,
                           std::string_view option) {
  write_atomically(path, option, [&text](int fd) { return write_all(fd, text); });
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& writer,
                           std::string_view option) {
  write_atomically(path, option, [&writer](int fd) {
    checked_fd_buf buf(fd);
    std::ostream os(&buf);
    writer(os);
    os.flush();
    return buf.take_error();
  });
}

namespace {
checked_fd_buf* stdout_buf = nullptr; // the one checked_stdout installs, while it lives

[[noreturn]] void throw_stdout_error(int err) {
  throw usage_error(fmt::format("cannot write to stdout: {}", std::strerror(err)));
}
} // namespace

checked_fd_buf::checked_fd_buf(int fd) : fd_(fd), line_buffered_(::isatty(fd) == 1) {
  setp(buffer_, buffer_ + sizeof(buffer_));
}

checked_fd_buf::~checked_fd_buf() { flush_buffer(); }

int checked_fd_buf::take_error() noexcept {
  const int err = error_;
  error_ = 0;
  return err;
}

bool checked_fd_buf::flush_buffer() noexcept {
  const char* p = pbase();
  const char* const end = pptr();
  setp(buffer_, buffer_ + sizeof(buffer_)); // written or dropped: never tried twice
  if (error_ != 0) return false;            // the output is broken: drop the rest
  while (p < end) {
    const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(end - p));
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    p += n;
  }
  return true;
}

checked_fd_buf::int_type checked_fd_buf::overflow(int_type c) {
  if (!flush_buffer()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  if (line_buffered_ && traits_type::to_char_type(c) == '\n' && !flush_buffer())
    return traits_type::eof();
  return c;
}

std::streamsize checked_fd_buf::xsputn(const char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    if (pptr() == epptr() && !flush_buffer()) return done;
    const std::streamsize room = epptr() - pptr();
    const std::streamsize chunk = std::min(room, n - done);
    traits_type::copy(pptr(), s + done, static_cast<std::size_t>(chunk));
    pbump(static_cast<int>(chunk));
    done += chunk;
  }
  if (line_buffered_ && traits_type::find(s, static_cast<std::size_t>(n), '\n') != nullptr &&
      !flush_buffer())
    return 0;
  return done;
}

int checked_fd_buf::sync() { return flush_buffer() ? 0 : -1; }

checked_stdout::checked_stdout() : buf_(STDOUT_FILENO), previous_(std::cout.rdbuf(&buf_)) {
  stdout_buf = &buf_;
}

checked_stdout::~checked_stdout() {
  std::cout.flush();
  std::cout.rdbuf(previous_);
  stdout_buf = nullptr;
}

void flush_stdout() {
  std::cout.flush();
  if (stdout_buf != nullptr)
    if (const int err = stdout_buf->take_error(); err != 0) throw_stdout_error(err);
}

void write_stdout(std::string_view text) {
  flush_stdout(); // anything written through the stream before comes first
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_stdout_error(errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

void deliver_streamed(const std::string& output_path,
                      const std::function<void(std::ostream&)>& write_file,
                      const std::function<std::string()>& stdout_text) {
  if (output_path == "-") {
    std::ostringstream text;
    write_file(text);
    write_stdout(std::move(text).str());
    return;
  }
  if (!output_path.empty()) write_file_atomically(output_path, write_file);
  write_stdout(stdout_text());
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
