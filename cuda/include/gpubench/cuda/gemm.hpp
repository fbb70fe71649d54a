#pragma once
// gemm on cuBLASLt (loaded at run time, as for the pipeline): C = op(A) op(B), column-major, the
// algorithm cuBLASLt's heuristic ranks first for the shape, or the fastest of its first few when
// they are timed (choose_fastest). Plain C++ header.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gpubench::cuda {

/// A, B and C in f64 (compute f64), f32 (compute f32 on the CUDA cores), tf32 (f32 data, compute
/// on the tensor cores with inputs rounded to tf32), bf16 or f16 (compute f32 on the tensor
/// cores); fp8: A and B in FP8 E4M3, C in bf16, compute f32 on the tensor cores (cuBLASLt's
/// default accumulation: partial sums carried on in f32, not its fast-accumulation mode), no
/// scaling (the scale factors cuBLASLt takes for FP8 left at 1).
enum class gemm_precision { f64, f32, tf32, bf16, f16, fp8 };

struct gemm_problem {
  gemm_precision precision = gemm_precision::f32;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  int candidates = 1; ///< how many of the heuristic's ranked algorithms the plan keeps (1 to 32)
};

class gemm_plan {
public:
  /// Creates the descriptors and asks the heuristic for its `p.candidates` best algorithms (it
  /// may offer fewer), the first of them in use; throws cuda_error(cudaErrorNotSupported) naming
  /// the shape when cuBLASLt has none, and no_device_error when cuBLASLt cannot be loaded.
  explicit gemm_plan(const gemm_problem& p);
  gemm_plan(const gemm_plan&) = delete;
  gemm_plan& operator=(const gemm_plan&) = delete;
  ~gemm_plan();

  /// C = op(A) op(B) on `s` (alpha 1, beta 0) with the algorithm in use.
  void run(const void* a, const void* b, void* c, cudaStream_t s) const;
  /// Times every candidate on these operands and puts the fastest in use: one untimed call each,
  /// then `rounds` rounds of one call of each in turn (so that a clock drifting under the power
  /// limit falls on all of them), each call between two events; the fastest median wins.
  void choose_fastest(const void* a, const void* b, void* c, cudaStream_t s, int rounds);
  /// The algorithm in use as cuBLASLt numbers it: id, tile, stages, split-K, the workspace it
  /// asked for, and how it was chosen (with each candidate's median when they were timed).
  [[nodiscard]] std::string algorithm() const;
  /// How many algorithms the heuristic offered (at most gemm_problem::candidates).
  [[nodiscard]] int candidate_count() const noexcept;
  /// The heuristic's rank of the algorithm in use, from 1.
  [[nodiscard]] int rank_in_use() const noexcept;
  /// The workspace cuBLASLt may use (device memory this plan holds).
  static constexpr std::size_t workspace_bytes = std::size_t{32} << 20U;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace gpubench::cuda
