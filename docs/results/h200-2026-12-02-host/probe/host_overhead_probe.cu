// Stand-alone probe (not part of gpubench): the host's cost of enqueueing each kind of call the
// encoder-decoder pipeline makes, and the GPU time of the same calls back to back.
//   nvcc -O2 -std=c++17 -arch=sm_90 host_overhead_probe.cu -lcublas -lcublasLt -o probe
// For each call: 30 rounds of 256 enqueues on a non-blocking stream; the host time per enqueue is
// the steady-clock time of the loop / 256 (the stream is synchronized after each round, untimed),
// the GPU time per call the event pair around the round / 256, the round enqueued behind a 20 ms
// kernel so that the GPU runs it back to back. Medians over the rounds.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                                         \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)
#define BK(x)                                                                                      \
  do {                                                                                             \
    cublasStatus_t s_ = (x);                                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      std::printf("%s: %d\n", #x, static_cast<int>(s_));                                           \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void empty_kernel() {}

/// Holds the GPU for `ns` nanoseconds, so that the calls enqueued meanwhile run back to back.
__global__ void hold_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void bias_like(float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = fmaxf(y[i] + 1.0F, 0.0F);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void probe(const char* name, cudaStream_t s, const std::function<void()>& call) {
  constexpr int per_round = 256;
  constexpr int rounds = 30;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 16; ++i) call(); // warm-up: first-use set-up, heuristics caches
  CK(cudaStreamSynchronize(s));
  std::vector<double> host, gpu;
  for (int r = 0; r < rounds; ++r) {
    hold_kernel<<<1, 1, 0, s>>>(20'000'000ULL); // 20 ms: longer than any round's enqueue
    CK(cudaEventRecord(a, s));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_round; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    CK(cudaEventRecord(b, s));
    CK(cudaStreamSynchronize(s));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / per_round);
    gpu.push_back(ms * 1000.0 / per_round);
  }
  std::printf("%-44s host %7.2f us/call  gpu %7.2f us/call\n", name, median(host), median(gpu));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
}

struct lt_gemm {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t la{}, lb{}, lc{};
  cublasLtMatmulAlgo_t algo{};
  int m, n, k;
  lt_gemm(cublasLtHandle_t lt, cublasOperation_t ta, cublasOperation_t tb, int m_, int n_, int k_,
          int lda, int ldb, int ldc, std::size_t ws)
      : m(m_), n(n_), k(k_) {
    BK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    BK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    BK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    BK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, ta == CUBLAS_OP_N ? m : k,
                                  ta == CUBLAS_OP_N ? k : m, lda));
    BK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, tb == CUBLAS_OP_N ? k : n,
                                  tb == CUBLAS_OP_N ? n : k, ldb));
    BK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, ldc));
    cublasLtMatmulPreference_t pref{};
    BK(cublasLtMatmulPreferenceCreate(&pref));
    BK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                            sizeof ws));
    cublasLtMatmulHeuristicResult_t res{};
    int found = 0;
    BK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found));
    if (found < 1) std::exit(2);
    algo = res.algo;
    cublasLtMatmulPreferenceDestroy(pref);
  }
};

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaStream_t s2;
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  cublasHandle_t h;
  BK(cublasCreate(&h));
  const std::size_t ws = std::size_t{32} << 20U;
  void* work = nullptr;
  CK(cudaMalloc(&work, ws));
  BK(cublasSetStream(h, s));
  BK(cublasSetWorkspace(h, work, ws));
  BK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_NOT_ALLOWED));
  cublasLtHandle_t lt;
  BK(cublasLtCreate(&lt));

  float *w, *x, *y;
  CK(cudaMalloc(&w, sizeof(float) * 2048 * 2048));
  CK(cudaMalloc(&x, sizeof(float) * 2048 * 32));
  CK(cudaMalloc(&y, sizeof(float) * 2048 * 2048));
  CK(cudaMemset(w, 0, sizeof(float) * 2048 * 2048));
  CK(cudaMemset(x, 0, sizeof(float) * 2048 * 32));
  const float one = 1.0F, zero = 0.0F;

  probe("empty kernel launch", s, [&] { empty_kernel<<<1, 32, 0, s>>>(); });
  probe("bias kernel launch (2048x32)", s, [&] { bias_like<<<256, 256, 0, s>>>(y, 2048 * 32); });
  probe("cudaEventRecord", s, [&] { CK(cudaEventRecord(ev, s)); });
  probe("cudaStreamWaitEvent (event of another stream)", s, [&] {
    CK(cudaEventRecord(ev, s2));
    CK(cudaStreamWaitEvent(s, ev, 0));
  });
  probe("cudaGetLastError", s, [&] { (void)cudaGetLastError(); });
  struct shape {
    const char* name;
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc;
  };
  const shape shapes[] = {
      {"NN 2048x32x2048 (encoder layer)", CUBLAS_OP_N, CUBLAS_OP_N, 2048, 32, 2048, 2048, 2048,
       2048},
      {"NN 2048x32x1024 (encoder first layer)", CUBLAS_OP_N, CUBLAS_OP_N, 2048, 32, 1024, 2048,
       1024, 2048},
      {"NN 1024x32x2048 (decoder first layer)", CUBLAS_OP_N, CUBLAS_OP_N, 1024, 32, 2048, 1024,
       2048, 1024},
      {"NT 1024x2048x32 (decoder dW)", CUBLAS_OP_N, CUBLAS_OP_T, 1024, 2048, 32, 1024, 2048, 1024},
      {"TN 1024x32x1024 (decoder dX)", CUBLAS_OP_T, CUBLAS_OP_N, 1024, 32, 1024, 1024, 1024, 1024},
  };
  for (const auto& sh : shapes) {
    char label[96];
    std::snprintf(label, sizeof label, "cublasSgemm %s", sh.name);
    probe(label, s, [&] {
      BK(cublasSgemm(h, sh.ta, sh.tb, sh.m, sh.n, sh.k, &one, w, sh.lda, x, sh.ldb, &zero, y,
                     sh.ldc));
    });
    lt_gemm g(lt, sh.ta, sh.tb, sh.m, sh.n, sh.k, sh.lda, sh.ldb, sh.ldc, ws);
    std::snprintf(label, sizeof label, "cublasLtMatmul %s", sh.name);
    probe(label, s, [&] {
      BK(cublasLtMatmul(lt, g.op, &one, w, g.la, x, g.lb, &zero, y, g.lc, y, g.lc, &g.algo, work,
                        ws, s));
    });
  }
  std::printf("done\n");
  return 0;
}
