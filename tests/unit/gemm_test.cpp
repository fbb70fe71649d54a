// gemm's CPU side: the work it declares, the per-architecture peak table, the tolerance rule at
// its edge, the layouts, and the f64 reference against a plain loop.
#include "gpubench/core/half.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/gemm/gemm_cpu.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace gpubench;

TEST_CASE("gemm declares 2mnk FLOPs and the least bytes: A, B read and C written once", "[gemm]") {
  const gemm_shape s{300, 200, 500, false, false};
  const auto w = gemm_work(s, gemm_dtype::bf16);
  CHECK(w.items == 2.0 * 300 * 200 * 500);
  CHECK(w.item_unit == "FLOP");
  CHECK(w.bytes == (300.0 * 500 + 500.0 * 200 + 300.0 * 200) * 2);
  CHECK(gemm_work(s, gemm_dtype::f64).bytes == 4 * w.bytes);
  CHECK(gemm_work(s, gemm_dtype::tf32).bytes == 2 * w.bytes);
  // fp8: one byte an element of A and B, C in bf16.
  CHECK(gemm_work(s, gemm_dtype::fp8).bytes == (300.0 * 500 + 500.0 * 200) + 300.0 * 200 * 2);
  CHECK(gemm_work(s, gemm_dtype::fp8).flops == w.flops);
  CHECK(gemm_input_bytes(gemm_dtype::fp8) == 1);
  CHECK(gemm_output_bytes(gemm_dtype::fp8) == 2);
}

TEST_CASE("the peak table gives FLOPs per clock per SM from the architecture", "[gemm]") {
  // H100/H200 (sm_90): 132 SMs at 1.98 GHz give the datasheet's 67 TFLOP/s for f32 and f64.
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::f32, 9, 0) * 132 * 1.98e9 ==
        Approx(66.9e12).epsilon(0.001));
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::f64, 9, 0) * 132 * 1.98e9 ==
        Approx(66.9e12).epsilon(0.001));
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::bf16, 9, 0) ==
        2 * *gemm_flops_per_clock_per_sm(gemm_dtype::tf32, 9, 0));
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::f16, 9, 0) ==
        *gemm_flops_per_clock_per_sm(gemm_dtype::bf16, 9, 0));
  // A100 (sm_80): 108 SMs at 1.41 GHz give 312 TFLOP/s of dense f16.
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::f16, 8, 0) * 108 * 1.41e9 ==
        Approx(312e12).epsilon(0.001));
  // fp8 (dense): twice bf16 where the tensor cores have it, H100 SXM's 1979 TFLOP/s at its 1830
  // MHz boost; none on sm_80 and sm_86.
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::fp8, 9, 0) * 132 * 1.83e9 ==
        Approx(1979e12).epsilon(0.001));
  CHECK(*gemm_flops_per_clock_per_sm(gemm_dtype::fp8, 8, 9) ==
        2 * *gemm_flops_per_clock_per_sm(gemm_dtype::bf16, 8, 9));
  CHECK_FALSE(gemm_flops_per_clock_per_sm(gemm_dtype::fp8, 8, 0).has_value());
  CHECK_FALSE(gemm_flops_per_clock_per_sm(gemm_dtype::fp8, 8, 6).has_value());
  CHECK_FALSE(gemm_flops_per_clock_per_sm(gemm_dtype::f32, 7, 5).has_value());
  CHECK_FALSE(gemm_flops_per_clock_per_sm(gemm_dtype::f32, 10, 0).has_value());
}

namespace {

/// The shape of layout `name` (one of gemm_layout_words) for an m x n x k product.
gemm_shape layout_shape(std::string_view name, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (const auto& [word, t] : gemm_layout_words)
    if (word == name) return gemm_shape_of(t, m, n, k);
  FAIL("no layout " << name);
  return {};
}

} // namespace

TEST_CASE("gemm layouts: nn, nt and tn, nothing else", "[gemm]") {
  CHECK(word_names<gemm_transposes>(gemm_layout_words) ==
        std::vector<std::string>{"nn", "nt", "tn"});
  const auto nt = layout_shape("nt", 3, 4, 5);
  CHECK_FALSE(nt.trans_a);
  CHECK(nt.trans_b);
  CHECK(nt.lda() == 3);
  CHECK(nt.ldb() == 4);
  const auto tn = layout_shape("tn", 3, 4, 5);
  CHECK(tn.trans_a);
  CHECK_FALSE(tn.trans_b);
  CHECK(tn.lda() == 5);
  CHECK(tn.ldb() == 5);
}

TEST_CASE("fp8 runs where the GPU has FP8 tensor cores, in the layout cuBLASLt takes", "[gemm]") {
  CHECK(gemm_unsupported_reason(gemm_dtype::fp8, true, false, 9, 0).empty());
  CHECK(gemm_unsupported_reason(gemm_dtype::fp8, true, false, 8, 9).empty());
  CHECK(gemm_unsupported_reason(gemm_dtype::fp8, false, false, 10, 0).empty());
  const auto old = gemm_unsupported_reason(gemm_dtype::fp8, true, false, 8, 6);
  CHECK_THAT(old, Catch::Contains("8.6 has no FP8 tensor cores"));
  const auto nn = gemm_unsupported_reason(gemm_dtype::fp8, false, false, 9, 0);
  CHECK_THAT(nn, Catch::Contains("--layout tn"));
  CHECK_FALSE(gemm_unsupported_reason(gemm_dtype::fp8, false, true, 9, 0).empty());
  for (const auto t : {gemm_dtype::f64, gemm_dtype::f32, gemm_dtype::tf32, gemm_dtype::bf16})
    CHECK(gemm_unsupported_reason(t, false, false, 7, 0).empty()); // the heuristic decides
}

TEST_CASE("the tolerance rule passes an error just inside its bound and fails one just outside",
          "[gemm]") {
  for (const auto t : {gemm_dtype::f64, gemm_dtype::f32, gemm_dtype::tf32, gemm_dtype::bf16,
                       gemm_dtype::f16, gemm_dtype::fp8}) {
    INFO(gemm_dtype_name(t));
    const gemm_shape s{2, 1, 1024, false, false};
    const auto tol = gemm_tolerance_for(t, s.k);
    CHECK(tol.per_sum > 0);
    gemm_reference ref;
    ref.c = {3.0, -2.0};
    ref.s = {40.0, 30.0};
    const double bound0 = tol.bound(3.0, 40.0);
    const double bound1 = tol.bound(-2.0, 30.0);
    // Values that the output type represents exactly near each side of the bound: the check reads
    // C in its own type, so the planted error is built in f64 for f64 and in float otherwise.
    const auto c_for = [&](double scale) {
      const double v0 = 3.0 + scale * bound0;
      const double v1 = -2.0 - scale * bound1;
      std::vector<std::byte> out(2 * gemm_output_bytes(t));
      if (t == gemm_dtype::f64) {
        const double vals[] = {v0, v1};
        std::memcpy(out.data(), vals, sizeof vals);
      } else {
        const float vals[] = {static_cast<float>(v0), static_cast<float>(v1)};
        if (t == gemm_dtype::f32 || t == gemm_dtype::tf32) {
          std::memcpy(out.data(), vals, sizeof vals);
        } else if (t == gemm_dtype::fp8) {
          // bf16 out; its bound (2^-13 accumulation) is far above a bf16 ulp, so the nearest
          // bf16 value stays on its side of the bound.
          const std::uint16_t bits[] = {float_to_bf16(vals[0]), float_to_bf16(vals[1])};
          std::memcpy(out.data(), bits, sizeof bits);
        } else {
          return std::vector<std::byte>{}; // 16-bit outputs: see below
        }
      }
      return out;
    };
    if (t == gemm_dtype::bf16 || t == gemm_dtype::f16) {
      // 16-bit outputs: the bound is about u_out |ref|, so the nearest value of the type (half an
      // ulp off at most) passes and one two ulps off fails.
      const bool bf = t == gemm_dtype::bf16;
      CHECK(tol.per_ref == (bf ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11)));
      const double ulp3 = bf ? std::ldexp(1.0, -6) : std::ldexp(1.0, -9); // at 3.0 and 2.0
      const auto enc = [bf](double v) {
        return bf ? float_to_bf16(static_cast<float>(v)) : float_to_half(static_cast<float>(v));
      };
      const std::uint16_t near[] = {enc(3.0 + 0.4 * ulp3), enc(-2.0 - 0.2 * ulp3)};
      const std::uint16_t far[] = {enc(3.0 + 2 * ulp3), enc(-2.0 - 2 * ulp3)};
      CHECK(check_gemm(t, s, near, ref).passed);
      const auto v = check_gemm(t, s, far, ref);
      CHECK_FALSE(v.passed);
      CHECK(v.mismatches == 2);
      continue;
    }
    const auto inside = c_for(0.9);
    const auto outside = c_for(1.5);
    CHECK(check_gemm(t, s, inside.data(), ref).passed);
    const auto v = check_gemm(t, s, outside.data(), ref);
    CHECK_FALSE(v.passed);
    CHECK(v.mismatches == 2);
    CHECK(v.details.contains("first_mismatch"));
  }
}

TEST_CASE("a NaN in C never passes", "[gemm]") {
  const gemm_shape s{1, 1, 4, false, false};
  gemm_reference ref;
  ref.c = {1.0};
  ref.s = {4.0};
  const float nan = std::nanf("");
  CHECK_FALSE(check_gemm(gemm_dtype::f32, s, &nan, ref).passed);
}

TEST_CASE("the f64 reference is the plain product, for every layout", "[gemm]") {
  thread_pool pool(2);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const char* layout : {"nn", "nt", "tn"}) {
    INFO(layout);
    const auto s = layout_shape(layout, 13, 11, 17);
    std::vector<double> a(13 * 17);
    std::vector<double> b(17 * 11);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    const auto ref = gemm_reference_f64(s, a, b, pool, 1000);
    REQUIRE(ref.c.size() == 13U * 11U);
    for (int i = 0; i < 13; ++i)
      for (int j = 0; j < 11; ++j) {
        double sum = 0;
        double mag = 0;
        for (int l = 0; l < 17; ++l) {
          const double x = s.trans_a ? a[static_cast<std::size_t>(i * 17 + l)]
                                     : a[static_cast<std::size_t>(l * 13 + i)];
          const double y = s.trans_b ? b[static_cast<std::size_t>(l * 11 + j)]
                                     : b[static_cast<std::size_t>(j * 17 + l)];
          sum += x * y;
          mag += std::fabs(x * y);
        }
        CHECK(ref.c[static_cast<std::size_t>(j * 13 + i)] == Approx(sum).epsilon(1e-12));
        CHECK(ref.s[static_cast<std::size_t>(j * 13 + i)] == Approx(mag).epsilon(1e-12));
      }
  }
}
