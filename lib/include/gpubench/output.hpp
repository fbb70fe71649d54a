#pragma once
#include <string>

namespace gpubench {

/// Throws usage_error unless `path` can be created: its folder exists and is writable. Called
/// before anything runs, so a typo does not cost a whole benchmark.
void check_output_path(const std::string& path);

/// Writes `text` to `path` atomically: a temporary file beside it, flushed, then renamed over.
/// An existing file is never truncated on failure; no partial file is left behind.
void write_file_atomically(const std::string& path, const std::string& text);

} // namespace gpubench
