#pragma once
// Where results leave the program: --output (atomically, never over a device or special file)
// and stdout (every write checked). docs/errors.md, "Output".
#include <functional>
#include <string>
#include <string_view>

namespace gpubench {

/// Throws usage_error unless `path` can be written: not empty; "-" (stdout) is always fine; an
/// existing path must be a regular file or a symlink to one (a device, FIFO or socket is refused:
/// the atomic rename would replace the node itself, e.g. /dev/null as root); its folder exists and
/// a file can be created there. Called before anything runs, so a typo does not cost a benchmark.
void check_output_path(const std::string& path);

/// Writes `text` to `path` atomically: a temporary file beside it, flushed, then renamed over. An
/// existing file is never truncated on failure and keeps its permission bits; a new file gets
/// 0666 less the umask. A symlink to a regular file is followed (the link stays). The temporary
/// file is removed on failure and by remove_pending_temp_file().
void write_file_atomically(const std::string& path, const std::string& text);

/// Writes `text` to stdout with every error checked: a closed pipe (EPIPE; SIGPIPE is ignored by
/// main) or a full device throws usage_error "cannot write to stdout: ...".
void write_stdout(std::string_view text);

/// The one order of delivery for every subcommand: --output first (the complete record; "-" sends
/// it to stdout instead, and then nothing else is written there), stdout second. The texts are
/// rendered only when needed.
void deliver(const std::string& output_path, const std::function<std::string()>& file_text,
             const std::function<std::string()>& stdout_text);

/// Async-signal-safe: removes the temporary file of an atomic write in progress, if any. For the
/// signal handler, which then ends the process.
void remove_pending_temp_file() noexcept;

} // namespace gpubench
