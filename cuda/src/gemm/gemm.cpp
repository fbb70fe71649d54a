// gemm on cuBLASLt: one descriptor, three layouts and the heuristic's ranked algorithms per plan,
// its first in use unless the candidates are timed.
#include "gpubench/cuda/gemm.hpp"

#include "core/blas_check.hpp"
#include "gpubench/cuda/cublas_loader.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/memory.hpp"

#include "gpubench/cuda/stream.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gpubench::cuda {

namespace {

struct types {
  cudaDataType_t inputs; ///< A and B
  cudaDataType_t output; ///< C
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

types types_of(gemm_precision p) {
  switch (p) {
  case gemm_precision::f64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
  case gemm_precision::f32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  case gemm_precision::tf32:
    return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
  case gemm_precision::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  case gemm_precision::f16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  case gemm_precision::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
}

template <class T>
T config_of(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  std::size_t written = 0;
  GPUBENCH_BLAS_TRY(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written));
  return value;
}

/// Why cuBLASLt may have found no FP8 algorithm: its FP8 kernels read and write columns whose
/// length is a multiple of 16 bytes (one byte an input, two for the bf16 C). Empty when they do.
std::string fp8_alignment_hint(const gemm_problem& p, std::int64_t a_rows, std::int64_t b_rows) {
  if (p.precision != gemm_precision::fp8) return {};
  const std::int64_t c_bytes = 2 * p.m;
  if (a_rows % 16 == 0 && b_rows % 16 == 0 && c_bytes % 16 == 0) return {};
  return fmt::format(": its FP8 kernels need each stored column a multiple of 16 bytes long, and "
                     "A's are {} bytes ({}), B's {} ({}), C's {} (2m)",
                     a_rows, p.trans_a ? "k" : "m", b_rows, p.trans_b ? "n" : "k", c_bytes);
}

} // namespace

struct gemm_plan::impl {
  gemm_problem problem;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatrixLayout_t b = nullptr;
  cublasLtMatrixLayout_t c = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> ranked; ///< the heuristic's order
  std::size_t in_use = 0;
  std::vector<double> median_ms; ///< per candidate, once choose_fastest has timed them
  device_buffer<std::byte> workspace{workspace_bytes};

  ~impl() {
    for (auto* l : {a, b, c})
      if (l != nullptr) (void)cublasLtMatrixLayoutDestroy(l);
    if (desc != nullptr) (void)cublasLtMatmulDescDestroy(desc);
    if (handle != nullptr) (void)cublasLtDestroy(handle);
  }
};

gemm_plan::gemm_plan(const gemm_problem& p) : impl_(std::make_unique<impl>()) {
  load_cublaslt(); // throws no_device_error naming the library and what to install
  auto& s = *impl_;
  s.problem = p;
  const auto t = types_of(p.precision);
  GPUBENCH_BLAS_TRY(cublasLtCreate(&s.handle));
  GPUBENCH_BLAS_TRY(cublasLtMatmulDescCreate(&s.desc, t.compute, t.scale));
  const cublasOperation_t op_a = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  GPUBENCH_BLAS_TRY(
      cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  GPUBENCH_BLAS_TRY(
      cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  // Stored shapes, column-major: A is m x k (k x m when transposed), B k x n (n x k).
  const std::int64_t a_rows = p.trans_a ? p.k : p.m;
  const std::int64_t b_rows = p.trans_b ? p.n : p.k;
  GPUBENCH_BLAS_TRY(
      cublasLtMatrixLayoutCreate(&s.a, t.inputs, u(a_rows), u(p.trans_a ? p.m : p.k), a_rows));
  GPUBENCH_BLAS_TRY(
      cublasLtMatrixLayoutCreate(&s.b, t.inputs, u(b_rows), u(p.trans_b ? p.k : p.n), b_rows));
  GPUBENCH_BLAS_TRY(cublasLtMatrixLayoutCreate(&s.c, t.output, u(p.m), u(p.n), p.m));
  cublasLtMatmulPreference_t pref = nullptr;
  GPUBENCH_BLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
  int returned = 0;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  s.ranked.resize(static_cast<std::size_t>(std::clamp(p.candidates, 1, 32)));
  try {
    const auto bytes = static_cast<std::uint64_t>(workspace_bytes);
    GPUBENCH_BLAS_TRY(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes)));
    status = cublasLtMatmulAlgoGetHeuristic(s.handle, s.desc, s.a, s.b, s.c, s.c, pref,
                                            static_cast<int>(s.ranked.size()), s.ranked.data(),
                                            &returned);
  } catch (...) {
    (void)cublasLtMatmulPreferenceDestroy(pref);
    throw;
  }
  (void)cublasLtMatmulPreferenceDestroy(pref);
  s.ranked.resize(static_cast<std::size_t>(std::max(returned, 0)));
  std::erase_if(s.ranked, [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  returned = static_cast<int>(s.ranked.size());
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0))
    throw cuda_error(
        cudaErrorNotSupported,
        fmt::format("cuBLASLt has no algorithm for a {} x {} x {} product of this type "
                    "on this GPU{}",
                    p.m, p.n, p.k, fp8_alignment_hint(p, a_rows, b_rows)));
  GPUBENCH_BLAS_TRY(status);
}

gemm_plan::~gemm_plan() = default;

void gemm_plan::run(const void* a, const void* b, void* c, cudaStream_t stream) const {
  auto& s = *impl_; // the workspace is written: the plan's state, not its logical value
  const double one64 = 1.0;
  const double zero64 = 0.0;
  const float one32 = 1.0F;
  const float zero32 = 0.0F;
  const bool f64 = s.problem.precision == gemm_precision::f64;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : static_cast<const void*>(&one32);
  const void* beta = f64 ? static_cast<const void*>(&zero64) : static_cast<const void*>(&zero32);
  GPUBENCH_BLAS_TRY(cublasLtMatmul(s.handle, s.desc, alpha, a, s.a, b, s.b, beta, c, s.c, c, s.c,
                                   &s.ranked[s.in_use].algo, s.workspace.data(), workspace_bytes,
                                   stream));
  GPUBENCH_CHECK_LAUNCH("cublasLtMatmul");
}

void gemm_plan::choose_fastest(const void* a, const void* b, void* c, cudaStream_t stream,
                               int rounds) {
  auto& s = *impl_;
  const std::size_t n = s.ranked.size();
  std::vector<std::vector<double>> ms(n);
  std::vector<event> starts(n);
  std::vector<event> stops(n);
  for (int round = -1; round < std::max(rounds, 1); ++round) {
    for (std::size_t i = 0; i < n; ++i) {
      s.in_use = i;
      if (round >= 0) starts[i].record(stream);
      run(a, b, c, stream);
      if (round >= 0) stops[i].record(stream);
    }
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(stream));
    if (round < 0) continue; // the untimed call of each
    for (std::size_t i = 0; i < n; ++i) ms[i].push_back(1e3 * elapsed_seconds(starts[i], stops[i]));
  }
  s.median_ms.clear();
  for (auto& t : ms) {
    std::ranges::sort(t);
    s.median_ms.push_back(t.size() % 2 == 1 ? t[t.size() / 2]
                                            : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2);
  }
  s.in_use = static_cast<std::size_t>(std::ranges::min_element(s.median_ms) - s.median_ms.begin());
}

int gemm_plan::candidate_count() const noexcept { return static_cast<int>(impl_->ranked.size()); }

int gemm_plan::rank_in_use() const noexcept { return static_cast<int>(impl_->in_use) + 1; }

std::string gemm_plan::algorithm() const {
  const auto& s = *impl_;
  const auto& chosen = s.ranked[s.in_use];
  std::string how = "heuristic's first of its ranking";
  if (!s.median_ms.empty()) {
    std::string medians;
    for (const double t : s.median_ms)
      medians += fmt::format("{}{:.3f}", medians.empty() ? "" : ", ", t);
    how = fmt::format("the fastest of the heuristic's first {} (number {} in its ranking; "
                      "medians of the timed calls in its order: {} ms)",
                      s.ranked.size(), s.in_use + 1, medians);
  }
  return fmt::format("cuBLASLt algorithm {} (tile id {}, stages id {}, split-K {}), {}, workspace "
                     "{} of {} MiB",
                     config_of<int>(chosen.algo, CUBLASLT_ALGO_CONFIG_ID),
                     config_of<std::uint32_t>(chosen.algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                     config_of<std::uint32_t>(chosen.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                     config_of<int>(chosen.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), how,
                     chosen.workspaceSize >= (std::size_t{1} << 20U)
                         ? fmt::format("{} MiB", chosen.workspaceSize >> 20U)
                         : fmt::format("{} B", chosen.workspaceSize),
                     workspace_bytes >> 20U);
}

} // namespace gpubench::cuda
