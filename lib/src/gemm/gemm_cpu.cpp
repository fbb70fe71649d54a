#include "gpubench/gemm/gemm_cpu.hpp"

#include "gpubench/core/half.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/flop_rates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>

#if GPUBENCH_HAVE_OPENBLAS
#include <cblas.h>
// A scipy-openblas32 wheel names its symbols scipy_cblas_sgemm ..., scipy-openblas64's
// scipy_cblas_sgemm64_ ...; Debian's cblas_sgemm.
#define GPUBENCH_OB_CAT3(a, b, c) a##b##c
#define GPUBENCH_OB_CAT(a, b, c) GPUBENCH_OB_CAT3(a, b, c)
#define GPUBENCH_OB(name) GPUBENCH_OB_CAT(GPUBENCH_OPENBLAS_PREFIX, name, GPUBENCH_OPENBLAS_SUFFIX)
#endif

namespace gpubench {

namespace {

/// Element i of C as a double, from its type.
double c_value(gemm_dtype t, const void* c, std::size_t i) {
  switch (t) {
  case gemm_dtype::f64: return static_cast<const double*>(c)[i];
  case gemm_dtype::f32:
  case gemm_dtype::tf32: return static_cast<const float*>(c)[i];
  case gemm_dtype::bf16:
  case gemm_dtype::fp8: return bf16_to_float(static_cast<const std::uint16_t*>(c)[i]);
  case gemm_dtype::f16: return half_to_float(static_cast<const std::uint16_t*>(c)[i]);
  }
  return 0;
}

#if !GPUBENCH_HAVE_OPENBLAS
/// A column-major element of op(X), X stored with `ld` rows.
inline double op_at(const std::vector<double>& x, std::int64_t ld, bool trans, std::int64_t row,
                    std::int64_t col) {
  return trans ? x[static_cast<std::size_t>(row * ld + col)]
               : x[static_cast<std::size_t>(col * ld + row)];
}

/// `count` indices spread evenly over [0, extent), the first and the last included.
std::vector<std::int64_t> spread(std::int64_t extent, std::int64_t count) {
  std::vector<std::int64_t> out;
  if (count >= extent) return out; // empty: every index
  for (std::int64_t i = 0; i < count; ++i)
    out.push_back(count == 1 ? 0 : i * (extent - 1) / (count - 1));
  return out;
}
#endif

} // namespace

std::string_view gemm_dtype_name(gemm_dtype t) {
  for (const auto& [name, type] : gemm_dtype_words)
    if (type == t) return name;
  return "?";
}

std::size_t gemm_input_bytes(gemm_dtype t) {
  switch (t) {
  case gemm_dtype::f64: return 8;
  case gemm_dtype::f32:
  case gemm_dtype::tf32: return 4;
  case gemm_dtype::bf16:
  case gemm_dtype::f16: return 2;
  case gemm_dtype::fp8: return 1;
  }
  return 0;
}

std::size_t gemm_output_bytes(gemm_dtype t) {
  return t == gemm_dtype::fp8 ? 2 : gemm_input_bytes(t);
}

work_counts gemm_work(const gemm_shape& s, gemm_dtype t) {
  const double m = static_cast<double>(s.m);
  const double n = static_cast<double>(s.n);
  const double k = static_cast<double>(s.k);
  const double in = static_cast<double>(gemm_input_bytes(t));
  const double out = static_cast<double>(gemm_output_bytes(t));
  return {(m * k + k * n) * in + m * n * out, 2.0 * m * n * k, "FLOP", 2.0 * m * n * k};
}

bool openblas_built_in() { return GPUBENCH_HAVE_OPENBLAS != 0; }

std::string openblas_config() {
#if GPUBENCH_HAVE_OPENBLAS
  const char* config = GPUBENCH_OB(openblas_get_config)();
  return config != nullptr ? std::string(config) : std::string("OpenBLAS");
#else
  return {};
#endif
}

void openblas_gemm(const gemm_shape& s, bool f64, const void* a, const void* b, void* c,
                   int threads) {
#if GPUBENCH_HAVE_OPENBLAS
  GPUBENCH_OB(openblas_set_num_threads)(std::max(threads, 1));
  const auto ta = s.trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = s.trans_b ? CblasTrans : CblasNoTrans;
  const auto m = static_cast<blasint>(s.m);
  const auto n = static_cast<blasint>(s.n);
  const auto k = static_cast<blasint>(s.k);
  const auto lda = static_cast<blasint>(s.lda());
  const auto ldb = static_cast<blasint>(s.ldb());
  // Through pointers: a call on a macro-built name reads (and formats) as a plain call.
  const auto dgemm = &GPUBENCH_OB(cblas_dgemm);
  const auto sgemm = &GPUBENCH_OB(cblas_sgemm);
  if (f64)
    dgemm(CblasColMajor, ta, tb, m, n, k, 1.0, static_cast<const double*>(a), lda,
          static_cast<const double*>(b), ldb, 0.0, static_cast<double*>(c), m);
  else
    sgemm(CblasColMajor, ta, tb, m, n, k, 1.0F, static_cast<const float*>(a), lda,
          static_cast<const float*>(b), ldb, 0.0F, static_cast<float*>(c), m);
#else
  (void)s, (void)f64, (void)a, (void)b, (void)c, (void)threads;
  throw std::logic_error("openblas_gemm: this build has no OpenBLAS");
#endif
}

gemm_reference gemm_reference_f64(const gemm_shape& s, const std::vector<double>& a,
                                  const std::vector<double>& b, thread_pool& pool,
                                  std::int64_t sampled_grid) {
  gemm_reference ref;
  const auto cells = [&] {
    return static_cast<std::size_t>(ref.rows.empty() ? s.m : std::ssize(ref.rows)) *
           static_cast<std::size_t>(ref.cols.empty() ? s.n : std::ssize(ref.cols));
  };
#if GPUBENCH_HAVE_OPENBLAS
  (void)sampled_grid;
  ref.c.assign(cells(), 0.0);
  ref.s.assign(cells(), 0.0);
  openblas_gemm(s, true, a.data(), b.data(), ref.c.data(), pool.size());
  std::vector<double> abs_a(a.size());
  std::vector<double> abs_b(b.size());
  std::transform(a.begin(), a.end(), abs_a.begin(), [](double x) { return std::fabs(x); });
  std::transform(b.begin(), b.end(), abs_b.begin(), [](double x) { return std::fabs(x); });
  openblas_gemm(s, true, abs_a.data(), abs_b.data(), ref.s.data(), pool.size());
#else
  // A plain loop: every element where the product is small enough, else a grid of rows and
  // columns spread over C (the first and last of each included).
  ref.rows = spread(s.m, sampled_grid);
  ref.cols = spread(s.n, sampled_grid);
  ref.c.assign(cells(), 0.0);
  ref.s.assign(cells(), 0.0);
  const std::int64_t nr = ref.rows.empty() ? s.m : std::ssize(ref.rows);
  const std::int64_t nc = ref.cols.empty() ? s.n : std::ssize(ref.cols);
  pool.parallel_for(static_cast<std::size_t>(nc), [&](std::size_t begin, std::size_t end) {
    for (auto jc = static_cast<std::int64_t>(begin); jc < static_cast<std::int64_t>(end); ++jc) {
      const std::int64_t j = ref.cols.empty() ? jc : ref.cols[static_cast<std::size_t>(jc)];
      for (std::int64_t ir = 0; ir < nr; ++ir) {
        const std::int64_t i = ref.rows.empty() ? ir : ref.rows[static_cast<std::size_t>(ir)];
        double sum = 0;
        double mag = 0;
        for (std::int64_t l = 0; l < s.k; ++l) {
          const double p = op_at(a, s.lda(), s.trans_a, i, l) * op_at(b, s.ldb(), s.trans_b, l, j);
          sum += p;
          mag += std::fabs(p);
        }
        ref.c[static_cast<std::size_t>(jc * nr + ir)] = sum;
        ref.s[static_cast<std::size_t>(jc * nr + ir)] = mag;
      }
    }
  });
#endif
  return ref;
}

gemm_tolerance gemm_tolerance_for(gemm_dtype t, std::int64_t k) {
  const double u32 = std::ldexp(1.0, -24);
  const double u64 = std::ldexp(1.0, -53);
  const double root_k = std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1)));
  gemm_tolerance tol;
  switch (t) {
  case gemm_dtype::f64:
    tol.per_sum = 4 * root_k * u64;
    tol.per_ref = u64;
    break;
  case gemm_dtype::f32:
    tol.per_sum = 4 * root_k * u32;
    tol.per_ref = u32;
    break;
  case gemm_dtype::tf32:
    tol.per_sum = 2 * std::ldexp(1.0, -11) + 4 * root_k * u32;
    tol.per_ref = u32;
    break;
  case gemm_dtype::bf16:
    tol.per_sum = 4 * root_k * u32;
    tol.per_ref = std::ldexp(1.0, -8);
    break;
  case gemm_dtype::f16:
    tol.per_sum = 4 * root_k * u32;
    tol.per_ref = std::ldexp(1.0, -11);
    break;
  case gemm_dtype::fp8: {
    // The tensor cores add each block of 32 products (one FP8 instruction's k) aligned to a
    // 13-bit mantissa; cuBLASLt adds the block sums in f32 (its default, not fast accumulation).
    const double blocks = std::max(static_cast<double>(k) / 32.0, 1.0);
    tol.per_sum = 4 * std::sqrt(32.0) * std::ldexp(1.0, -13) + 4 * std::sqrt(blocks) * u32;
    tol.per_ref = std::ldexp(1.0, -8);
    break;
  }
  }
  return tol;
}

verification check_gemm(gemm_dtype t, const gemm_shape& s, const void* c,
                        const gemm_reference& ref) {
  const auto tol = gemm_tolerance_for(t, s.k);
  verification v;
  v.performed = true;
  const std::int64_t nr = ref.rows.empty() ? s.m : std::ssize(ref.rows);
  const std::int64_t nc = ref.cols.empty() ? s.n : std::ssize(ref.cols);
  double worst_share = 0; // the largest |error| / bound: how close the worst element came
  for (std::int64_t jc = 0; jc < nc; ++jc) {
    const std::int64_t j = ref.cols.empty() ? jc : ref.cols[static_cast<std::size_t>(jc)];
    for (std::int64_t ir = 0; ir < nr; ++ir) {
      const std::int64_t i = ref.rows.empty() ? ir : ref.rows[static_cast<std::size_t>(ir)];
      const auto at = static_cast<std::size_t>(jc * nr + ir);
      const double want = ref.c[at];
      const double got = c_value(t, c, static_cast<std::size_t>(j * s.m + i));
      const double err = std::fabs(got - want);
      const double bound = tol.bound(want, ref.s[at]);
      ++v.checked;
      if (!std::isfinite(got) || !(err <= bound)) {
        if (v.mismatches == 0)
          v.details["first_mismatch"] = {
              {"row", i}, {"col", j}, {"got", got}, {"want", want}, {"bound", bound}};
        ++v.mismatches;
        continue;
      }
      v.max_abs_error = std::max(v.max_abs_error, err);
      if (bound > 0) worst_share = std::max(worst_share, err / bound);
    }
  }
  v.passed = v.mismatches == 0;
  v.details["worst_error_of_bound"] = worst_share;
  v.method = fmt::format(
      "|got - ref| <= {:.3g} x sum|a||b| + {:.3g} x |ref| (f64 reference from the same inputs{}); "
      "worst element at {:.1f}% of its bound",
      tol.per_sum, tol.per_ref,
      ref.rows.empty() ? std::string(", every element")
                       : fmt::format(", a grid of {} x {} elements", nr, nc),
      100 * worst_share);
  return v;
}

std::optional<double> gemm_flops_per_clock_per_sm(gemm_dtype t, int cc_major, int cc_minor) {
  // {f64, f32, tf32, f16/bf16, fp8}: dense FLOPs per clock per SM (an FMA is 2 FLOPs); fp8 0
  // where the architecture has no FP8 tensor cores.
  static constexpr std::array<cuda::arch_rates<5>, 4> table{{
      {8, 0, {128, 128, 1024, 2048, 0}},    // A100 (GA100): FP64 on the tensor cores (DMMA)
      {8, 6, {4, 256, 512, 1024, 0}},       // GA10x (A10, A40, RTX 30)
      {8, 9, {4, 256, 512, 1024, 2048}},    // AD10x (L4, L40, RTX 40)
      {9, 0, {256, 256, 2048, 4096, 8192}}, // GH100 (H100, H200): FP64 on the tensor cores
  }};
  const cuda::arch_rates<5>* r = cuda::rates_of(table, cc_major, cc_minor);
  if (r == nullptr) return std::nullopt;
  switch (t) {
  case gemm_dtype::f64: return r->flops[0];
  case gemm_dtype::f32: return r->flops[1];
  case gemm_dtype::tf32: return r->flops[2];
  case gemm_dtype::bf16:
  case gemm_dtype::f16: return r->flops[3];
  case gemm_dtype::fp8: return r->flops[4] > 0 ? std::optional<double>(r->flops[4]) : std::nullopt;
  }
  return std::nullopt;
}

std::string gemm_unsupported_reason(gemm_dtype t, bool trans_a, bool trans_b, int cc_major,
                                    int cc_minor) {
  if (t != gemm_dtype::fp8) return {};
  if (cc_major * 10 + cc_minor < 89)
    return fmt::format("fp8: compute capability {}.{} has no FP8 tensor cores (8.9 and newer do)",
                       cc_major, cc_minor);
  if (cc_major < 10 && !(trans_a && !trans_b))
    return fmt::format("fp8: cuBLASLt takes FP8 operands on compute capability {}.{} in the tn "
                       "layout only (A transposed, B not): run it with --layout tn",
                       cc_major, cc_minor);
  return {};
}

} // namespace gpubench
