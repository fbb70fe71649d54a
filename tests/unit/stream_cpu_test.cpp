// The stream CPU reference: every kernel's formula on every element, the dot's sums and
// tolerance, and the checks that compare GPU outputs with it.
#include "gpubench/engine/check_elements.hpp"
#include "gpubench/stream/stream_cpu.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace gpubench;
using cuda::stream_op;

namespace {

template <typename T>
struct arrays {
  std::vector<T> a, b, c;
  arrays(std::size_t n, std::uint64_t seed, dtype type, thread_pool& pool) : a(n), b(n), c(n) {
    fill_random(type, a.data(), n, seed, 1, pool);
    fill_random(type, b.data(), n, seed, 2, pool);
    fill_random(type, c.data(), n, seed, 3, pool);
  }
};

template <typename T>
void check_every_kernel(dtype type) {
  const auto seed = std::random_device{}();
  INFO("seed " << seed << " dtype " << dtype_name(type));
  thread_pool pool(3);
  for (const std::size_t n : {1UL, 3UL, 4099UL, 100003UL}) {
    INFO("n " << n);
    arrays<T> x(n, seed, type, pool);
    const auto s = static_cast<T>(0.4);
    // BabelStream's order: each kernel reads what the previous ones wrote.
    auto before = x;
    stream_reference(stream_op::copy, type, x.a.data(), x.b.data(), x.c.data(), n, pool);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(x.c[i] == before.a[i]);
    before = x;
    stream_reference(stream_op::mul, type, x.a.data(), x.b.data(), x.c.data(), n, pool);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(x.b[i] == static_cast<T>(s * before.c[i]));
    before = x;
    stream_reference(stream_op::add, type, x.a.data(), x.b.data(), x.c.data(), n, pool);
    for (std::size_t i = 0; i < n; ++i)
      REQUIRE(x.c[i] == static_cast<T>(before.a[i] + before.b[i]));
    before = x;
    stream_reference(stream_op::triad, type, x.a.data(), x.b.data(), x.c.data(), n, pool);
    for (std::size_t i = 0; i < n; ++i) {
      const T product = s * before.c[i]; // rounded on its own: no fused multiply-add
      REQUIRE(x.a[i] == static_cast<T>(before.b[i] + product));
    }
    before = x;
    const auto d =
        stream_reference(stream_op::dot, type, x.a.data(), x.b.data(), x.c.data(), n, pool);
    CHECK(x.a == before.a); // dot changes nothing
    CHECK(x.b == before.b);
    CHECK(x.c == before.c);
    long double exact = 0;
    long double abs_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const long double p = static_cast<long double>(x.a[i]) * x.b[i];
      exact += p;
      abs_sum += std::fabs(p);
    }
    CHECK(std::abs(d.abs_sum - static_cast<double>(abs_sum)) <=
          1e-12 * static_cast<double>(abs_sum));
    CHECK(std::abs(d.sum - static_cast<double>(exact)) <= stream_dot_tolerance(n, d.abs_sum) / 2);
  }
}

} // namespace

TEST_CASE("the stream reference runs every kernel on every element", "[stream]") {
  check_every_kernel<float>(dtype::f32);
  check_every_kernel<double>(dtype::f64);
}

TEST_CASE("the stream reference's dot does not depend on the thread count beyond its tolerance",
          "[stream]") {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  thread_pool one(1), five(5);
  const std::size_t n = 1'000'003;
  arrays<float> x(n, seed, dtype::f32, one);
  const auto d1 =
      stream_reference(stream_op::dot, dtype::f32, x.a.data(), x.b.data(), x.c.data(), n, one);
  const auto d5 =
      stream_reference(stream_op::dot, dtype::f32, x.a.data(), x.b.data(), x.c.data(), n, five);
  CHECK(check_stream_dot(n, d1, d5.sum).passed);
}

TEST_CASE("the stream reference refuses the 16-bit types", "[stream]") {
  thread_pool pool(1);
  std::vector<std::uint16_t> x(4);
  CHECK_THROWS_AS(
      stream_reference(stream_op::copy, dtype::f16, x.data(), x.data(), x.data(), 4, pool),
      std::invalid_argument);
}

TEST_CASE("the stream array check finds every differing element", "[stream]") {
  thread_pool pool(2);
  std::vector<double> expected(1000, 0.25), got(1000, 0.25);
  CHECK(check_stream_array(dtype::f64, expected.data(), got.data(), 1000, pool).passed);
  got[17] = std::nextafter(0.25, 1.0);
  got[900] = std::numeric_limits<double>::quiet_NaN();
  const auto v = check_stream_array(dtype::f64, expected.data(), got.data(), 1000, pool);
  CHECK_FALSE(v.passed);
  CHECK(v.checked == 1000);
  CHECK(v.mismatches == 2);
  CHECK(v.details["first_mismatch"]["index"] == 17);
  CHECK(std::isinf(v.max_abs_error));
  // Exact means bit for bit: -0 is not +0.
  std::vector<float> zero(1, 0.0F), negative_zero(1, -0.0F);
  CHECK_FALSE(check_stream_array(dtype::f32, zero.data(), negative_zero.data(), 1, pool).passed);
}

TEST_CASE("the stream array check skips equal blocks and still finds every difference in any block",
          "[stream]") {
  // Whole blocks that match byte for byte are passed without a look at their elements; the
  // mismatches, the first one and the largest error must come out as an element-by-element
  // comparison gives them, wherever the differences fall (a block's first or last element, the
  // short last block, several in one block).
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  thread_pool pool(3);
  const std::size_t n = 5 * check_elements_block + 123;
  std::vector<float> expected(n);
  fill_random(dtype::f32, expected.data(), n, seed, 1, pool);
  const std::size_t b = check_elements_block;
  const std::vector<std::size_t> fixed{0, b - 1, b, 3 * b + 7, 3 * b + 8, n - 1};
  for (int round = 0; round < 20; ++round) {
    std::vector<float> got = expected;
    std::vector<std::size_t> at(fixed.begin(), fixed.begin() + (round % 7));
    for (int k = 0; k < round % 4; ++k)
      at.push_back(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng));
    for (const std::size_t i : at) {
      switch (i % 3) {
      case 0: got[i] = std::nextafter(expected[i], 2.0F); break;
      case 1: got[i] = std::numeric_limits<float>::quiet_NaN(); break;
      default: got[i] = expected[i] + 0.5F; break;
      }
    }
    std::uint64_t mismatches = 0;
    double worst = 0;
    std::size_t first = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::bit_cast<std::uint32_t>(expected[i]) == std::bit_cast<std::uint32_t>(got[i]))
        continue;
      ++mismatches;
      first = std::min(first, i);
      worst = std::max(worst, std::isnan(got[i]) ? std::numeric_limits<double>::infinity()
                                                 : std::abs(double{got[i]} - double{expected[i]}));
    }
    const auto v = check_stream_array(dtype::f32, expected.data(), got.data(), n, pool);
    INFO("round " << round);
    CHECK(v.checked == n);
    CHECK(v.mismatches == mismatches);
    CHECK(v.passed == (mismatches == 0));
    CHECK(v.max_abs_error == worst);
    if (mismatches > 0) CHECK(v.details["first_mismatch"]["index"] == first);
  }
}

TEST_CASE("the dot check accepts a sum within the tolerance and rejects one beyond it or NaN",
          "[stream]") {
  const dot_sums expected{100.0, 1e6};
  const std::size_t n = std::size_t{1} << 28U;
  const double tol = stream_dot_tolerance(n, expected.abs_sum);
  CHECK(tol == Approx(2.02 * 0x1p28 * 0x1p-53 * 1e6));
  CHECK(check_stream_dot(n, expected, 100.0 + 0.9 * tol).passed);
  CHECK(check_stream_dot(n, expected, 100.0 - 0.9 * tol).passed);
  const auto far = check_stream_dot(n, expected, 100.0 + 1.1 * tol);
  CHECK_FALSE(far.passed);
  CHECK(far.mismatches == 1);
  CHECK_FALSE(check_stream_dot(n, expected, std::numeric_limits<double>::quiet_NaN()).passed);
}
