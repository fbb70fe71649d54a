#pragma once
// Files that come from elsewhere (run files, result files from other machines): read with bounds
// on size, type and nesting, parsed strictly, and quoted in messages only in short pieces
// (docs/errors.md, "Hostile input").
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpubench {

/// Largest run file or result file gpubench reads (256 MiB): far above any real one, far below
/// what would exhaust memory once parsed.
inline constexpr std::uint64_t max_untrusted_file_bytes = std::uint64_t{256} << 20U;

/// Deepest nesting of arrays and objects accepted in a run file or result file. Real files nest
/// fewer than 10 levels; the bound keeps every recursive walk of a loaded value (serializing,
/// comparing, destroying) shallow.
inline constexpr int max_json_depth = 64;

/// Most characters of untrusted text a message quotes.
inline constexpr std::size_t max_quoted_chars = 80;

/// Reads the whole of `path`, a regular file of at most `max_bytes`. Directories, FIFOs, sockets
/// and devices are refused by type before anything is read (a FIFO without a writer never blocks);
/// `what` names the file in messages ("run file"). Throws usage_error "PATH: ...".
std::string read_untrusted_file(const std::string& path, std::string_view what,
                                std::uint64_t max_bytes = max_untrusted_file_bytes);

/// Parses `text` as one JSON document, stricter than nlohmann's default: no NUL byte anywhere,
/// nesting at most `max_depth`, no key twice in one object, no number that overflows or
/// underflows to zero as a double. Errors are usage_error "NAME[:LINE:COL]: KEY.PATH: what".
nlohmann::json parse_untrusted_json(std::string_view text, std::string_view name,
                                    int max_depth = max_json_depth);

/// read_untrusted_file then parse_untrusted_json; running out of memory is reported as a
/// usage_error naming the file rather than a bare std::bad_alloc.
nlohmann::json load_untrusted_json(const std::string& path, std::string_view what);

/// Longest string a run file or result file may hold where gpubench prints it (names,
/// descriptions, reasons): far above any real one, far below a screenful of junk.
inline constexpr std::size_t max_text_bytes = 4096;

/// True when `text` is valid UTF-8 and holds no code point a terminal does not show as itself:
/// none of U+0000-U+001F, U+007F, U+0080-U+009F (a terminal reads U+009B as an escape), the
/// bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: U+202E reverses
/// the rest of the line) and U+2028, U+2029. Text from a file printed as it is could clear the
/// screen, retitle the terminal, forge a table row or reverse it.
bool printable_text(std::string_view text) noexcept;

/// A string from a file that gpubench prints (a name, a reason): printable_text, and at most
/// max_text_bytes long. printable_field_rule() says so for messages ("... must be RULE").
bool printable_field(std::string_view text) noexcept;
std::string printable_field_rule();

/// `text` with everything printable_text() refuses escaped, the one rule for every message that
/// quotes input: \n, \t, \r; other controls and bytes that are not UTF-8 as \xNN (`\xff`);
/// the other hidden code points as \uNNNN (`\u202e`).
std::string escaped(std::string_view text);

/// `text` on one line and at most `max` characters: control characters escaped, the middle of a
/// long text replaced by "...", never cutting a UTF-8 sequence.
std::string clip(std::string_view text, std::size_t max = max_quoted_chars);

/// A JSON value written for a message: at most `max` characters, without ever serializing more
/// than that of it (however large or deep the value is).
std::string preview(const nlohmann::json& value, std::size_t max = max_quoted_chars);

} // namespace gpubench
