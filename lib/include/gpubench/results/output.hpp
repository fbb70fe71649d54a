#pragma once
// Where results leave the program: --output (atomically, never over a device or special file)
// and stdout (every write checked). docs/errors.md, "Output".
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpubench {

/// Throws usage_error unless `path` can be written: not empty; "-" (stdout) is always fine; an
/// existing path must be a regular file or a symlink to one (a device, FIFO or socket is refused:
/// the atomic rename would replace the node itself, e.g. /dev/null as root); its folder exists and
/// a file can be created there. A symlink whose target does not exist yet names that target (it
/// is created, as a shell's `>` would); a symlink loop is refused. Called before anything runs, so
/// a typo does not cost a benchmark. `option` names the option in messages ("--junit").
void check_output_path(const std::string& path, std::string_view option = "--output");

/// The file a write of output `path` lands in: `path`, or the file a symlink at `path` points to
/// (a missing target is created, as a shell's `>` would). Throws usage_error (exit 2) when what is
/// there may not be replaced: a folder, a device or other special file, a symlink loop, a symlink
/// another user planted in a shared folder (sticky and writable by all; the kernel's
/// protected_symlinks rule), or an existing file that own_file_refusal() refuses (a hard link,
/// another user's file).
std::string output_target(const std::string& path, std::string_view option = "--output");

/// Writes `text` to `path` atomically: a temporary file beside it, flushed, then renamed over. An
/// existing file is never truncated on failure and keeps its permission bits; a new file gets
/// 0666 less the umask. A symlink is followed (the link stays; a missing target is created). The
/// temporary file is removed on failure and by remove_pending_temp_file().
void write_file_atomically(const std::string& path, const std::string& text,
                           std::string_view option = "--output");

/// The same, the content written by `writer` straight to the temporary file (a long sweep's result
/// file is never held in memory whole). A failed write is reported as above.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& writer,
                           std::string_view option = "--output");

/// Whether `a` and `b` name the same file: the same inode when both exist (through symlinks,
/// hard links, /dev/stdin), else the same absolute path once symlinks are resolved.
bool same_file(const std::string& a, const std::string& b);

/// An input of a command, for the checks below: what it is ("run file", "BASE result file") and
/// its path as given.
struct named_input {
  std::string what;
  std::string path;
};

/// Throws usage_error (exit 2) when the output file `path` of option `option` is one of `inputs`
/// (same_file): writing it would destroy that input (`compare a b --output b`, `run f --output f`).
/// "-" and "" are never an input. Called before any input is read.
void check_output_is_not_an_input(const std::string& path, std::string_view option,
                                  const std::vector<named_input>& inputs);

/// The first pair i < j of `paths` that name the same file (same_file), if any.
std::optional<std::pair<std::size_t, std::size_t>>
first_duplicate(const std::vector<std::string>& paths);

/// `text` made safe for one error message on stderr: each line's control characters escaped and
/// each long word (an echoed argument) clipped as clip() does, then the line clipped as a whole;
/// line breaks between lines are kept. main prints every error through it.
std::string printable_message(std::string_view text);

/// A stream buffer whose writes to `fd` are all checked: the first failure's errno is kept (the
/// rest of the output is then dropped), where stdio's buffered stdout fails silently at exit.
/// Line buffered when `fd` is a terminal.
class checked_fd_buf : public std::streambuf {
public:
  explicit checked_fd_buf(int fd);
  checked_fd_buf(const checked_fd_buf&) = delete;
  checked_fd_buf& operator=(const checked_fd_buf&) = delete;
  ~checked_fd_buf() override;
  /// The errno of the first failed write since the last call (0 if none), and forgets it.
  int take_error() noexcept;

protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

private:
  bool flush_buffer() noexcept;
  int fd_;
  bool line_buffered_;
  int error_ = 0;
  char buffer_[1 << 14];
};

/// While it lives, std::cout writes through a checked_fd_buf on stdout (main holds one), so that
/// --help, --version, completions and dry-run listings are checked like every other output.
class checked_stdout {
public:
  checked_stdout();
  checked_stdout(const checked_stdout&) = delete;
  checked_stdout& operator=(const checked_stdout&) = delete;
  ~checked_stdout();

private:
  checked_fd_buf buf_;
  std::streambuf* previous_;
};

/// Flushes std::cout and throws usage_error "cannot write to stdout: REASON" if a write to stdout
/// through it has failed since the last check (a full disk, a closed pipe).
void flush_stdout();

/// Writes `text` to stdout with every error checked: a closed pipe (EPIPE; SIGPIPE is ignored by
/// main) or a full device throws usage_error "cannot write to stdout: ...".
void write_stdout(std::string_view text);

/// The one order of delivery for every subcommand: --output first (the complete record; "-" sends
/// it to stdout instead, and then nothing else is written there), stdout second. The texts are
/// rendered only when needed.
void deliver(const std::string& output_path, const std::function<std::string()>& file_text,
             const std::function<std::string()>& stdout_text);

/// deliver() with the file's content written by `write_file` as it is rendered, not first made
/// into one string.
void deliver_streamed(const std::string& output_path,
                      const std::function<void(std::ostream&)>& write_file,
                      const std::function<std::string()>& stdout_text);

/// Async-signal-safe: removes the temporary file of an atomic write in progress, if any. For the
/// signal handler, which then ends the process.
void remove_pending_temp_file() noexcept;

} // namespace gpubench
