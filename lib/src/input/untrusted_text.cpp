// Quoting text that comes from elsewhere: control and bidirectional characters escaped, UTF-8
// never cut inside a sequence, long values clipped to their head and tail (untrusted_file.hpp).
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpubench {
namespace {

using nlohmann::json;

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U; }

/// The longest prefix of `s` of at most `n` bytes that does not cut a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && utf8_continuation(s[n])) --n;
  return s.substr(0, n);
}

/// The longest suffix of `s` of at most `n` bytes that starts on a UTF-8 sequence.
std::string_view utf8_suffix(std::string_view s, std::size_t n) {
  if (s.size() <= n) return s;
  std::size_t start = s.size() - n;
  while (start < s.size() && utf8_continuation(s[start])) ++start;
  return s.substr(start);
}

/// One UTF-8 sequence at the start of `s`: its code point and length, or code point -1 and
/// length 1 for a byte that does not start a valid, shortest-form sequence.
std::pair<long, std::size_t> decode_utf8(std::string_view s) noexcept {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80U) return {b0, 1};
  std::size_t len = 0;
  long cp = 0;
  long least = 0;
  if ((b0 & 0xE0U) == 0xC0U) {
    len = 2, cp = b0 & 0x1FU, least = 0x80;
  } else if ((b0 & 0xF0U) == 0xE0U) {
    len = 3, cp = b0 & 0x0FU, least = 0x800;
  } else if ((b0 & 0xF8U) == 0xF0U) {
    len = 4, cp = b0 & 0x07U, least = 0x10000;
  } else {
    return {-1, 1};
  }
  if (s.size() < len) return {-1, 1};
  for (std::size_t i = 1; i < len; ++i) {
    if (!utf8_continuation(s[i])) return {-1, 1};
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3FU);
  }
  if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {-1, 1};
  return {cp, len};
}

/// Code points a terminal does not show as themselves: C0 and C1 controls, DEL, the bidirectional
/// controls (U+202E reverses the rest of the line) and the line and paragraph separators.
bool hidden_code_point(long cp) noexcept {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/// The one escaping rule for text quoted in messages: \n \t \r, other controls and bytes that
/// are not UTF-8 as \xNN, hidden code points above U+007F as \uNNNN; the rest as it is.
std::string escape_controls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto [cp, len] = decode_utf8(s.substr(i));
    if (cp == '\n')
      out += "\\n";
    else if (cp == '\t')
      out += "\\t";
    else if (cp == '\r')
      out += "\\r";
    else if (cp < 0 || cp < 0x20 || cp == 0x7F)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
    else if (hidden_code_point(cp))
      out += fmt::format("\\u{:04x}", cp);
    else
      out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

} // namespace

std::string escaped(std::string_view text) { return escape_controls(text); }

bool printable_text(std::string_view text) noexcept {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto [cp, len] = decode_utf8(text.substr(i));
    if (cp < 0 || hidden_code_point(cp)) return false;
    i += len;
  }
  return true;
}

bool printable_field(std::string_view text) noexcept {
  return text.size() <= max_text_bytes && printable_text(text);
}

std::string printable_field_rule() {
  return fmt::format(
      "printable text (UTF-8 without control or bidirectional characters) of at most {} bytes",
      max_text_bytes);
}

std::string clip(std::string_view text, std::size_t max) {
  // Escape at most what can be shown, so that a 1 GB value costs no more than a short one.
  if (max < 8) max = 8;
  std::string head = escape_controls(utf8_prefix(text, max));
  if (head.size() <= max && text.size() <= max) return head;
  const std::size_t keep_tail = (max - 3) / 3;
  const std::string tail = escape_controls(utf8_suffix(text, keep_tail));
  const std::size_t keep_head = max - 3 - std::min(tail.size(), keep_tail);
  std::string out(utf8_prefix(head, keep_head));
  // An escape cut in half would read as something else: drop its remains.
  if (const auto bs = out.rfind('\\'); bs != std::string::npos && out.size() - bs < 6)
    out.resize(bs);
  return out + "..." + std::string(utf8_suffix(tail, keep_tail));
}

namespace {

void write_preview(const json& v, std::string& out, std::size_t budget, int depth) {
  if (out.size() > budget) return;
  const auto quoted = [&](const std::string& s) {
    const json shortened(std::string(utf8_prefix(s, budget - std::min(budget, out.size()) + 4)));
    return shortened.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  if (v.is_object() || v.is_array()) {
    const bool object = v.is_object();
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (out.size() > budget) return;
      if (!first) out += ',';
      first = false;
      if (object) out += quoted(it.key()) + ':';
      if (depth >= 8)
        out += "...";
      else
        write_preview(*it, out, budget, depth + 1);
    }
    out += object ? '}' : ']';
  } else if (v.is_string()) {
    out += quoted(v.get_ref<const std::string&>());
  } else {
    out += v.dump(); // a scalar: a few characters
  }
}

} // namespace

std::string preview(const json& value, std::size_t max) {
  std::string out;
  write_preview(value, out, max, 0);
  if (out.size() <= max) return escape_controls(out);
  return escape_controls(utf8_prefix(out, max - 3)) + "...";
}

} // namespace gpubench
