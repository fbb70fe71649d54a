#pragma once
// Element types shared by host code and kernels. f16/bf16 are stored on the host as raw 16-bit
// patterns (std::uint16_t) so that host code needs no CUDA headers for them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpubench {

enum class dtype { f32, f64, f16, bf16 };

constexpr std::size_t dtype_size(dtype t) noexcept {
  switch (t) {
  case dtype::f64: return 8;
  case dtype::f32: return 4;
  case dtype::f16:
  case dtype::bf16: return 2;
  }
  return 0;
}

constexpr std::string_view dtype_name(dtype t) noexcept {
  switch (t) {
  case dtype::f32: return "f32";
  case dtype::f64: return "f64";
  case dtype::f16: return "f16";
  case dtype::bf16: return "bf16";
  }
  return "?";
}

constexpr std::optional<dtype> parse_dtype(std::string_view s) noexcept {
  if (s == "f32") return dtype::f32;
  if (s == "f64") return dtype::f64;
  if (s == "f16") return dtype::f16;
  if (s == "bf16") return dtype::bf16;
  return std::nullopt;
}

} // namespace gpubench
