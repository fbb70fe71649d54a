#pragma once
// Counter-based random numbers: value i of stream s under seed k is a pure function of (k, s, i),
// so data are the same whatever the thread count or batch size, on CPU and GPU alike.
#include <cstdint>

namespace gpubench {

constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

/// The numbers of one (seed, stream) by index. The part that does not depend on the index is
/// computed once, here, so a loop over many indices pays one splitmix64 a value.
class random_sequence {
public:
  constexpr random_sequence(std::uint64_t seed, std::uint64_t stream) noexcept
      : key_(splitmix64(seed ^ splitmix64(stream + 0x632BE59BD9B4E019ULL))) {}

  /// 64 random bits for `index`.
  [[nodiscard]] constexpr std::uint64_t bits(std::uint64_t index) const noexcept {
    return splitmix64(key_ + index);
  }
  /// Uniform in [0, 1) with 24 random bits (exactly representable as float).
  [[nodiscard]] constexpr float unit_float(std::uint64_t index) const noexcept {
    return static_cast<float>(bits(index) >> 40U) * (1.0F / 16777216.0F);
  }
  /// Uniform in [0, 1) with 53 random bits.
  [[nodiscard]] constexpr double unit_double(std::uint64_t index) const noexcept {
    return static_cast<double>(bits(index) >> 11U) * (1.0 / 9007199254740992.0);
  }

private:
  std::uint64_t key_;
};

/// 64 random bits keyed by (seed, stream, index).
constexpr std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream,
                                    std::uint64_t index) noexcept {
  return random_sequence(seed, stream).bits(index);
}

/// Uniform in [0, 1) with 24 random bits (exactly representable as float).
constexpr float random_unit_float(std::uint64_t seed, std::uint64_t stream,
                                  std::uint64_t index) noexcept {
  return random_sequence(seed, stream).unit_float(index);
}

/// Uniform in [0, 1) with 53 random bits.
constexpr double random_unit_double(std::uint64_t seed, std::uint64_t stream,
                                    std::uint64_t index) noexcept {
  return random_sequence(seed, stream).unit_double(index);
}

} // namespace gpubench
