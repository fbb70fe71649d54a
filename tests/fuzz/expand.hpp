#pragma once
// Structure-aware inputs for the fuzz targets. libFuzzer's inputs stay small (-max_len), but the
// defects that matter for untrusted files need large ones: nesting 100,000 levels deep, files past
// 1 MB. A byte 0x01 (never valid in JSON text, nor in a size) starts a repeat: 0x01, a count in two
// bytes (big-endian, times 4: up to 262,140), a length L in one byte, then L bytes repeated count
// times. "\x01\x92\x7c\x01[" is 150,000 '['. Repeats may appear anywhere, any number of times;
// the expanded text is cut at 4 MiB.
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpubench::fuzz {

inline std::string expand(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t max_expanded = std::size_t{4} << 20U;
  std::string out;
  std::size_t i = 0;
  while (i < size && out.size() < max_expanded) {
    if (data[i] != 0x01 || i + 4 > size) {
      out += static_cast<char>(data[i++]);
      continue;
    }
    const std::size_t count = ((std::size_t{data[i + 1]} << 8U) | data[i + 2]) * 4;
    const std::size_t length = data[i + 3];
    i += 4;
    const std::size_t end = i + length < size ? i + length : size;
    for (std::size_t k = 0; k < count && out.size() < max_expanded; ++k)
      out.append(reinterpret_cast<const char*>(data + i), end - i);
    i = end;
  }
  if (out.size() > max_expanded) out.resize(max_expanded);
  return out;
}

} // namespace gpubench::fuzz
