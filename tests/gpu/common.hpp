#pragma once
// Shared by the GPU test files.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

namespace gpubench {

/// The seed of every random input of this run of the GPU tests: fresh each run, so runs cover new
/// data, and printed once (with the first test that asks) so a failure can be reproduced.
inline std::uint64_t fresh_seed() {
  static const std::uint64_t seed = std::random_device{}();
  static bool printed = false;
  if (!printed) {
    printed = true;
    WARN("GPU tests seed: " << seed);
  }
  return seed;
}

} // namespace gpubench
