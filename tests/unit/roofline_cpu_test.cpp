// gpubench roofline's host side (lib/src/roofline/roofline_cpu.cpp): the chain an intensity
// gives, its exact FLOP and byte counts, and the check of every element, which must fail for an
// output one FMA short, an element left unwritten, or a lane the chain should have skipped.
#include "gpubench/core/half.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/roofline/roofline_cpu.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace gpubench;

namespace {

/// What the GPU should write, computed here element by element the slow way.
std::vector<std::byte> expected_output(dtype t, std::size_t n, const roofline_work& w,
                                       std::uint64_t seed, thread_pool& pool,
                                       std::uint32_t fmas_delta = 0) {
  const std::size_t size = dtype_size(t);
  std::vector<std::byte> in(n * size);
  fill_roofline_input(t, in.data(), n, seed, pool);
  std::vector<std::byte> out = in;
  const auto [a, b] = roofline_constants(t);
  const std::size_t lane_elements = cuda::roofline_lane_elements(t);
  for (std::size_t i = 0; i < n; ++i) {
    if ((i / lane_elements) % w.chain.every != 0) continue;
    const std::uint32_t fmas = w.chain.fmas + fmas_delta;
    if (t == dtype::f32) {
      float y = 0;
      std::memcpy(&y, in.data() + 4 * i, 4);
      for (std::uint32_t k = 0; k < fmas; ++k)
        y = std::fma(y, static_cast<float>(a), static_cast<float>(b));
      std::memcpy(out.data() + 4 * i, &y, 4);
    } else if (t == dtype::f64) {
      double y = 0;
      std::memcpy(&y, in.data() + 8 * i, 8);
      for (std::uint32_t k = 0; k < fmas; ++k) y = std::fma(y, a, b);
      std::memcpy(out.data() + 8 * i, &y, 8);
    } else {
      std::uint16_t h = 0;
      std::memcpy(&h, in.data() + 2 * i, 2);
      const bool f16 = t == dtype::f16;
      double y = f16 ? half_to_float(h) : bf16_to_float(h);
      for (std::uint32_t k = 0; k < fmas; ++k) {
        const auto r = static_cast<float>(std::fma(y, a, b));
        y = f16 ? half_to_float(float_to_half(r)) : bf16_to_float(float_to_bf16(r));
      }
      h = f16 ? float_to_half(static_cast<float>(y)) : float_to_bf16(static_cast<float>(y));
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

} // namespace

TEST_CASE("roofline: the chain an intensity gives, and its exact work", "[roofline]") {
  const std::size_t n = 1 << 20;
  SECTION("f32 at 1024 FLOPs a byte: 4096 FMAs an element") {
    const auto w = roofline_work_for(dtype::f32, n, 1024);
    CHECK(w.chain.fmas == 4096);
    CHECK(w.chain.every == 1);
    CHECK(w.flops == 2.0 * 4096 * n);
    CHECK(w.bytes == 8.0 * n);
    CHECK(w.intensity == 1024);
  }
  SECTION("f32 at 1/16: one FMA on one element in 4") {
    const auto w = roofline_work_for(dtype::f32, n, 0.0625);
    CHECK(w.chain.fmas == 1);
    CHECK(w.chain.every == 4);
    CHECK(w.flops == 2.0 * (n / 4));
    CHECK(w.intensity == 0.0625);
  }
  SECTION("f16 lanes are pairs: one FMA on one pair in 8 at 1/16") {
    const auto w = roofline_work_for(dtype::f16, n, 0.0625);
    CHECK(w.chain.every == 8);
    CHECK(w.flops == 2.0 * 2 * (n / 2 / 8));
    CHECK(w.intensity == 0.0625);
  }
  SECTION("f64 at 1: 8 FMAs") {
    const auto w = roofline_work_for(dtype::f64, n, 1);
    CHECK(w.chain.fmas == 8);
    CHECK(w.intensity == 1);
  }
}

TEST_CASE("roofline: the constants are exact in their type and keep y in [0, 1]", "[roofline]") {
  for (const auto t : {dtype::f32, dtype::f64, dtype::f16, dtype::bf16}) {
    const auto [a, b] = roofline_constants(t);
    CHECK(a + b == 1.0);
    CHECK(a < 1.0);
    if (t == dtype::f16) CHECK(half_to_float(float_to_half(static_cast<float>(a))) == a);
    if (t == dtype::bf16) CHECK(bf16_to_float(float_to_bf16(static_cast<float>(a))) == a);
  }
}

TEST_CASE("roofline: every element is checked, and a wrong chain fails", "[roofline]") {
  thread_pool pool(2);
  const std::size_t n = 8 * 1000;
  const std::uint64_t seed = 42;
  for (const auto t : {dtype::f32, dtype::f64, dtype::f16, dtype::bf16}) {
    for (const double intensity : {0.0625, 1.0, 16.0}) {
      INFO(dtype_name(t) << " at " << intensity << " FLOPs/byte");
      const auto w = roofline_work_for(t, n, intensity);
      auto good = expected_output(t, n, w, seed, pool);
      const auto ok = check_roofline(t, n, w, seed, good.data(), pool);
      CHECK(ok.passed);
      CHECK(ok.checked == n);
      // One FMA more on every chained element (16-bit types: near 1 a step may round back to the
      // same value, so only the wider types must see every element change).
      const auto longer = expected_output(t, n, w, seed, pool, 1);
      const auto off = check_roofline(t, n, w, seed, longer.data(), pool);
      if (t == dtype::f32 || t == dtype::f64) CHECK_FALSE(off.passed);
      // An element never written keeps its poison (all-ones bytes: NaN).
      std::memset(good.data() + dtype_size(t) * 17, 0xFF, dtype_size(t));
      const auto poisoned = check_roofline(t, n, w, seed, good.data(), pool);
      CHECK_FALSE(poisoned.passed);
      CHECK(poisoned.mismatches == 1);
      CHECK(poisoned.details.at("first_mismatch") == 17);
    }
  }
}

TEST_CASE("roofline: CUDA-core peaks per architecture", "[roofline]") {
  CHECK(cuda::cuda_core_flops_per_clock_per_sm(dtype::f32, 9, 0) == 256);
  CHECK(cuda::cuda_core_flops_per_clock_per_sm(dtype::f64, 9, 0) == 128);
  CHECK(cuda::cuda_core_flops_per_clock_per_sm(dtype::f16, 9, 0) == 512);
  CHECK_FALSE(cuda::cuda_core_flops_per_clock_per_sm(dtype::f32, 7, 0).has_value());
}
