#include "gpubench/core/half.hpp"
#include "gpubench/core/random.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/engine/check_elements.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace gpubench;

TEST_CASE("the thread pool covers every index exactly once", "[pool]") {
  thread_pool pool(4);
  CHECK(pool.size() == 4);
  for (const std::size_t n : {0UL, 1UL, 3UL, 4UL, 1000UL}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](std::size_t b, std::size_t e) {
      for (auto i = b; i < e; ++i) hits[i]++;
    });
    for (auto& h : hits) REQUIRE(h == 1);
  }
}

TEST_CASE("the thread pool rethrows a worker's exception", "[pool]") {
  thread_pool pool(3);
  CHECK_THROWS_AS(pool.parallel_for(9,
                                    [](std::size_t b, std::size_t) {
                                      if (b > 0) throw std::runtime_error("boom");
                                    }),
                  std::runtime_error);
  int calls = 0;
  pool.parallel_for(1, [&](std::size_t, std::size_t) { ++calls; }); // still usable
  CHECK(calls == 1);
}

TEST_CASE("random inputs depend on the seed only, not the thread count", "[vecadd]") {
  thread_pool one(1), four(4);
  std::vector<float> x(10007), y(10007), z(10007);
  fill_random(dtype::f32, x.data(), x.size(), 7, 1, one);
  fill_random(dtype::f32, y.data(), y.size(), 7, 1, four);
  fill_random(dtype::f32, z.data(), z.size(), 8, 1, four);
  CHECK(x == y);
  CHECK(x != z);
  for (const float v : x) REQUIRE((v >= -1.0F && v < 1.0F));
}

TEST_CASE("a recorded seed gives the inputs it gave before, in every dtype", "[vecadd]") {
  // Values of the generator as first shipped: a result's recorded seed must reproduce its inputs.
  thread_pool pool(3);
  const std::size_t n = 100003;
  std::vector<float> f(n);
  std::vector<double> d(n);
  std::vector<std::uint16_t> h(n);
  std::vector<std::uint16_t> bf(n);
  fill_random(dtype::f32, f.data(), n, 42, 1, pool);
  fill_random(dtype::f64, d.data(), n, 42, 2, pool);
  fill_random(dtype::f16, h.data(), n, 42, 3, pool);
  fill_random(dtype::bf16, bf.data(), n, 42, 4, pool);
  struct golden {
    std::size_t i;
    std::uint32_t f32;
    std::uint64_t f64;
    std::uint16_t f16, bf16;
  };
  for (const auto& g : {golden{0, 0x3f464eaaU, 0x3fe0c9d77d39b3e6ULL, 0xbb45U, 0xbee2U},
                        golden{1, 0xbec10d48U, 0xbfde47f898b99774ULL, 0xa81fU, 0x3e30U},
                        golden{77777, 0x3ec36308U, 0x3fda5ba779bdfe68ULL, 0x36f9U, 0x3e1bU},
                        golden{n - 1, 0x3f2ff910U, 0x3fe361e4f087ab4cULL, 0x3abcU, 0xbea0U}}) {
    INFO("index " << g.i);
    CHECK(std::bit_cast<std::uint32_t>(f[g.i]) == g.f32);
    CHECK(std::bit_cast<std::uint64_t>(d[g.i]) == g.f64);
    CHECK(h[g.i] == g.f16);
    CHECK(bf[g.i] == g.bf16);
  }
  CHECK(random_bits(42, 7, 12345) == 0x061930d8bcbe4b90ULL);
  CHECK(random_bits(1, 0, 0) == 0x8d7aecaf722fc711ULL);
  const random_sequence r(42, 1);
  CHECK(r.unit_float(77777) * 2.0F - 1.0F == f[77777]);
}

TEST_CASE("the CPU reference adds every element", "[vecadd]") {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  thread_pool pool(3);
  const std::size_t n = 4099;
  std::vector<float> a(n), b(n), c(n, -7.0F);
  fill_random(dtype::f32, a.data(), n, seed, 1, pool);
  fill_random(dtype::f32, b.data(), n, seed, 2, pool);
  vecadd_reference(dtype::f32, a.data(), b.data(), c.data(), n, pool);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);

  std::vector<std::uint16_t> ha(n), hb(n), hc(n);
  fill_random(dtype::f16, ha.data(), n, seed, 1, pool);
  fill_random(dtype::f16, hb.data(), n, seed, 2, pool);
  vecadd_reference(dtype::f16, ha.data(), hb.data(), hc.data(), n, pool);
  for (std::size_t i = 0; i < n; ++i)
    REQUIRE(hc[i] == float_to_half(half_to_float(ha[i]) + half_to_float(hb[i])));
}

TEST_CASE("the check finds a single wrong element and a NaN", "[vecadd]") {
  thread_pool pool(2);
  std::vector<double> ref(100, 1.5), got(100, 1.5);
  CHECK(check_vecadd(dtype::f64, ref.data(), got.data(), 100, pool).passed);
  got[42] = std::nextafter(1.5, 2.0);
  auto v = check_vecadd(dtype::f64, ref.data(), got.data(), 100, pool);
  CHECK_FALSE(v.passed);
  CHECK(v.mismatches == 1);
  got[42] = NAN;
  v = check_vecadd(dtype::f64, ref.data(), got.data(), 100, pool);
  CHECK(v.mismatches == 1);
}

TEST_CASE("the check passes equal blocks whole and still fails a matching NaN or infinity in one",
          "[vecadd]") {
  // Blocks equal byte for byte and finite pass without a look at each element; a NaN or an
  // infinity on both sides, or any difference, in any block must still count, as it does one
  // element at a time.
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  thread_pool pool(2);
  const std::size_t b = check_elements_block;
  const std::size_t n = 3 * b + 5;
  std::vector<float> ref(n);
  fill_random(dtype::f32, ref.data(), n, seed, 1, pool);
  auto got = ref;
  CHECK(check_vecadd(dtype::f32, ref.data(), got.data(), n, pool).passed);
  ref[2 * b + 17] = got[2 * b + 17] = std::numeric_limits<float>::quiet_NaN(); // the same bits
  ref[n - 1] = got[n - 1] = std::numeric_limits<float>::infinity();
  got[b] = std::nextafter(ref[b], 2.0F);
  const auto v = check_vecadd(dtype::f32, ref.data(), got.data(), n, pool);
  CHECK_FALSE(v.passed);
  CHECK(v.mismatches == 3);
  CHECK(v.details["first_mismatch"]["index"] == b);
  std::vector<std::uint16_t> h(n);
  fill_random(dtype::f16, h.data(), n, seed, 2, pool);
  auto hg = h;
  CHECK(check_vecadd(dtype::f16, h.data(), hg.data(), n, pool).passed);
  h[b + 1] = hg[b + 1] = 0x7C00; // +infinity in f16, on both sides
  const auto hv = check_vecadd(dtype::f16, h.data(), hg.data(), n, pool);
  CHECK(hv.mismatches == 1);
  CHECK(hv.details["first_mismatch"]["index"] == b + 1);
}

TEST_CASE("16-bit checks allow one ulp and no more", "[vecadd]") {
  thread_pool pool(2);
  const std::uint16_t one = float_to_half(1.0F);
  std::vector<std::uint16_t> ref(10, one), got(10, one);
  got[3] = static_cast<std::uint16_t>(one + 1); // one ulp
  CHECK(check_vecadd(dtype::f16, ref.data(), got.data(), 10, pool).passed);
  got[3] = static_cast<std::uint16_t>(one + 2); // two ulps
  CHECK_FALSE(check_vecadd(dtype::f16, ref.data(), got.data(), 10, pool).passed);
}
