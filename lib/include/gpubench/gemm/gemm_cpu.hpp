#pragma once
// gemm's CPU side: OpenBLAS (when built in), the f64 reference that verifies every product, the
// tolerance it is judged by, and the theoretical peak of each element type per GPU architecture.
// Matrices are column-major, as BLAS and cuBLAS take them: op(A) is m x k, op(B) k x n, C m x n.
#include "gpubench/core/word_choice.hpp"
#include "gpubench/results/result.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

class thread_pool;

/// The element types of gemm: its inputs A and B and its output C; tf32 has f32 inputs and output
/// that the tensor cores round to 10 mantissa bits; fp8 has FP8 E4M3 inputs and a bf16 output.
enum class gemm_dtype { f64, f32, tf32, bf16, f16, fp8 };

/// The element types by their names, in the order --dtype lists them.
inline constexpr std::array<word_choice<gemm_dtype>, 6> gemm_dtype_words{
    {{"f64", gemm_dtype::f64},
     {"f32", gemm_dtype::f32},
     {"tf32", gemm_dtype::tf32},
     {"bf16", gemm_dtype::bf16},
     {"f16", gemm_dtype::f16},
     {"fp8", gemm_dtype::fp8}}};

std::string_view gemm_dtype_name(gemm_dtype t);
/// Bytes of one element of A and B.
std::size_t gemm_input_bytes(gemm_dtype t);
/// Bytes of one element of C (bf16 for fp8, else as the inputs).
std::size_t gemm_output_bytes(gemm_dtype t);

/// The shape of one product: C (m x n) = op(A) op(B), with op(A) m x k and op(B) k x n; a
/// transposed operand is stored transposed (layout "tn": A stored k x m).
struct gemm_shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  /// Rows of A and B as stored (their leading dimensions, column-major).
  [[nodiscard]] std::int64_t lda() const { return trans_a ? k : m; }
  [[nodiscard]] std::int64_t ldb() const { return trans_b ? n : k; }
};

/// Whether A and B are used transposed.
struct gemm_transposes {
  bool a = false;
  bool b = false;
};

/// The layouts --layout offers: "nn", "nt", "tn" (both transposed, "tt", is not offered).
inline constexpr std::array<word_choice<gemm_transposes>, 3> gemm_layout_words{
    {{"nn", {false, false}}, {"nt", {false, true}}, {"tn", {true, false}}}};

/// The shape of an m x n x k product in layout `t`.
constexpr gemm_shape gemm_shape_of(gemm_transposes t, std::int64_t m, std::int64_t n,
                                   std::int64_t k) {
  return {m, n, k, t.a, t.b};
}

/// The work of one product: 2mnk FLOPs, and the least bytes: A and B read once, C written once.
work_counts gemm_work(const gemm_shape& s, gemm_dtype t);

/// OpenBLAS, when this build has it ("" otherwise): its version and configuration string.
std::string openblas_config();
bool openblas_built_in();

/// C = op(A) op(B) in OpenBLAS on `threads` of its own threads: dgemm for f64, sgemm for the
/// others (bf16, f16 and fp8 inputs widened to f32 beforehand, exactly; `a`, `b` and `c` are then
/// float). Throws std::logic_error in a build without OpenBLAS.
void openblas_gemm(const gemm_shape& s, bool f64, const void* a, const void* b, void* c,
                   int threads);

/// The reference: C = op(A) op(B) and S = |op(A)| |op(B)| (the sum of the products' magnitudes,
/// which the error bound scales with), both in f64 from the same rounded inputs given as f64.
/// With OpenBLAS built in, two dgemm calls over the whole matrices; without it, a plain loop over
/// the elements `rows` x `cols` lists (every one when they are empty).
struct gemm_reference {
  std::vector<std::int64_t> rows; ///< the rows of C checked (empty: all)
  std::vector<std::int64_t> cols; ///< the columns of C checked (empty: all)
  std::vector<double> c;          ///< rows.size() x cols.size() (or m x n), column-major
  std::vector<double> s;
};
gemm_reference gemm_reference_f64(const gemm_shape& s, const std::vector<double>& a,
                                  const std::vector<double>& b, thread_pool& pool,
                                  std::int64_t sampled_grid);

/// The bound each element of C is judged by (docs/gemm.md): |got - ref| <= (e_in + 4 sqrt(k)
/// u_acc) S + u_out |ref|, with u_acc the unit roundoff of the accumulation (2^-24 for f32
/// compute, 2^-53 for f64), u_out that of C's type (2^-8 bf16 and fp8's bf16 out, 2^-11 f16),
/// and e_in = 2 x 2^-11 for tf32, whose inputs the tensor cores round to 10 mantissa bits (0 for
/// the others: A and B are already in their type, on the CPU side too). fp8: the tensor cores add
/// each block of 32 products aligned to a 13-bit mantissa and cuBLASLt adds the block sums in
/// f32, so the term is 4 sqrt(32) 2^-13 + 4 sqrt(k / 32) 2^-24.
struct gemm_tolerance {
  double per_sum = 0; ///< e_in + 4 sqrt(k) u_acc
  double per_ref = 0; ///< u_out
  [[nodiscard]] double bound(double ref, double sum_abs) const {
    return per_sum * sum_abs + per_ref * (ref < 0 ? -ref : ref);
  }
};
gemm_tolerance gemm_tolerance_for(gemm_dtype t, std::int64_t k);

/// Checks C (in its type, column-major, m x n) against the reference, element by element.
verification check_gemm(gemm_dtype t, const gemm_shape& s, const void* c,
                        const gemm_reference& ref);

/// FLOPs per clock per SM of dense products of `t` on compute capability major.minor, from
/// NVIDIA's architecture whitepapers (docs/gemm.md has the table): the tensor cores for tf32,
/// bf16, f16, fp8 and (sm_80 and sm_90) f64, the CUDA cores for f32. nullopt for an architecture
/// the table does not list, and for fp8 where the architecture has no FP8 tensor cores.
std::optional<double> gemm_flops_per_clock_per_sm(gemm_dtype t, int cc_major, int cc_minor);

/// Why cuBLASLt cannot run `t` in layout `tr` on compute capability major.minor, or "" when it
/// can as far as the type and layout go: FP8 needs FP8 tensor cores (8.9 and newer), and before
/// 10.0 the TN layout (A transposed, B not: both operands K-major).
std::string gemm_unsupported_reason(gemm_dtype t, bool trans_a, bool trans_b, int cc_major,
                                    int cc_minor);

} // namespace gpubench
