// Experiment: a CUDA-core f32 GEMM (column-major, C = A B, "nn") against cublasSgemm, 8192^3.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

// Block tile BM x BN, k-slab BK, thread tile TM x TN (as two halves each), NT threads.
template <int BM, int BN, int BK, int TM, int TN, int WX>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_nn(int m, int n, int k, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
         float* __restrict__ C, int ldc) {
  constexpr int NT = (BM / TM) * (BN / TN);
  constexpr int TX = BM / TM; // threads along m
  __shared__ __align__(16) float As[2][BK][BM];
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tid = threadIdx.x;
  const int bm = blockIdx.x * BM, bn = blockIdx.y * BN;
  // Loads of A: float4 along m. BM*BK/4 float4, NT threads.
  constexpr int A4 = BM * BK / 4 / NT;
  // Loads of B: float4 along k of one column; BN*BK/4 float4.
  constexpr int B4 = BN * BK / 4 / NT;
  float4 ra[A4], rb[B4];
  const float* Ab = A + bm;
  const float* Bb = B + (size_t)bn * ldb;
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < A4; ++i) {
      const int idx = tid + i * NT; const int row4 = idx % (BM / 4), kk = idx / (BM / 4);
      ra[i] = *reinterpret_cast<const float4*>(Ab + (size_t)(k0 + kk) * lda + row4 * 4);
    }
#pragma unroll
    for (int i = 0; i < B4; ++i) {
      const int idx = tid + i * NT; const int col = idx % BN, k4 = idx / BN;
      rb[i] = *reinterpret_cast<const float4*>(Bb + (size_t)col * ldb + k0 + k4 * 4);
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < A4; ++i) {
      const int idx = tid + i * NT; const int row4 = idx % (BM / 4), kk = idx / (BM / 4);
      *reinterpret_cast<float4*>(&As[buf][kk][row4 * 4]) = ra[i];
    }
#pragma unroll
    for (int i = 0; i < B4; ++i) {
      const int idx = tid + i * NT; const int col = idx % BN, k4 = idx / BN;
      Bs[buf][k4 * 4 + 0][col] = rb[i].x; Bs[buf][k4 * 4 + 1][col] = rb[i].y;
      Bs[buf][k4 * 4 + 2][col] = rb[i].z; Bs[buf][k4 * 4 + 3][col] = rb[i].w;
    }
  };
  const int lane = tid % 32, warp = tid / 32;
  const int tx = (warp % (TX / WX)) * WX + lane % WX, ty = (warp / (TX / WX)) * (32 / WX) + lane / WX;
  float acc[TM][TN] = {};
  float fa[2][TM], fb[2][TN];
  auto frag = [&](int buf, int kk, int s) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int q = 0; q < TM / 8; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(&As[buf][kk][h * (BM / 2) + (tx * (TM / 8) + q) * 4]);
        fa[s][h * TM / 2 + q * 4 + 0] = v.x; fa[s][h * TM / 2 + q * 4 + 1] = v.y;
        fa[s][h * TM / 2 + q * 4 + 2] = v.z; fa[s][h * TM / 2 + q * 4 + 3] = v.w;
      }
#pragma unroll
      for (int q = 0; q < TN / 8; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][kk][h * (BN / 2) + (ty * (TN / 8) + q) * 4]);
        fb[s][h * TN / 2 + q * 4 + 0] = v.x; fb[s][h * TN / 2 + q * 4 + 1] = v.y;
        fb[s][h * TN / 2 + q * 4 + 2] = v.z; fb[s][h * TN / 2 + q * 4 + 3] = v.w;
      }
    }
  };
  load(0); store(0); __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += BK) {
    const bool more = k0 + BK < k;
    if (more) load(k0 + BK);
    frag(buf, 0, 0);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk + 1 < BK) frag(buf, kk + 1, (kk + 1) & 1);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[kk & 1][i], fb[kk & 1][j], acc[i][j]);
    }
    if (more) { store(buf ^ 1); __syncthreads(); buf ^= 1; }
  }
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int col = bn + (j / (TN / 2)) * (BN / 2) + ty * (TN / 2) + j % (TN / 2);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int q = 0; q < TM / 8; ++q) {
        const int row = bm + h * (BM / 2) + (tx * (TM / 8) + q) * 4;
        float4 v = make_float4(acc[h * TM / 2 + q * 4][j], acc[h * TM / 2 + q * 4 + 1][j],
                               acc[h * TM / 2 + q * 4 + 2][j], acc[h * TM / 2 + q * 4 + 3][j]);
        *reinterpret_cast<float4*>(C + (size_t)col * ldc + row) = v;
      }
  }
}

template <int BM, int BN, int BK, int TM, int TN, int WX = BM / TM>
void launch(int n, const float* a, const float* b, float* c) {
  dim3 grid(n / BM, n / BN);
  sgemm_nn<BM, BN, BK, TM, TN, WX><<<grid, (BM / TM) * (BN / TN)>>>(n, n, n, a, n, b, n, c, n);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 8192;
  const int reps = argc > 2 ? atoi(argv[2]) : 20;
  const size_t c = (size_t)n * n;
  std::vector<float> h(c);
  std::mt19937 g(42); std::uniform_real_distribution<float> u(-1, 1);
  float *a, *b, *cr, *co;
  CK(cudaMalloc(&a, c * 4)); CK(cudaMalloc(&b, c * 4)); CK(cudaMalloc(&cr, c * 4)); CK(cudaMalloc(&co, c * 4));
  for (auto& x : h) x = u(g); CK(cudaMemcpy(a, h.data(), c * 4, cudaMemcpyHostToDevice));
  for (auto& x : h) x = u(g); CK(cudaMemcpy(b, h.data(), c * 4, cudaMemcpyHostToDevice));
  cublasHandle_t hd; cublasCreate(&hd);
  const float one = 1, zero = 0;
  int maxk = 0; cudaDeviceGetAttribute(&maxk, cudaDevAttrClockRate, 0); const unsigned maxclk = maxk / 1000;
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ref(c), out(c);
  auto timeit = [&](const char* name, auto f, float* dst, bool check) {
    CK(cudaMemset(dst, 0xFF, c * 4));
    f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    if (check) {
      CK(cudaMemcpy(out.data(), dst, c * 4, cudaMemcpyDeviceToHost));
      double worst = 0; size_t bad = 0;
      for (size_t i = 0; i < c; ++i) { double d = std::fabs((double)out[i] - ref[i]); if (!(d <= 1e-3 * std::sqrt((double)n))) ++bad; worst = std::max(worst, d); }
      printf("%s: worst |diff| vs cuBLAS %.3g, %zu beyond bound\n", name, worst, bad);
    }
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      cudaEventRecord(e0); f(); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
      float t; cudaEventElapsedTime(&t, e0, e1); ms.push_back(t);
      CK(cudaGetLastError());
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2] * 1e-3, tf = 2.0 * n * n * n / med / 1e12;
    const double peak_max = 2.0 * 128 * sms * maxclk * 1e6 / 1e12;
    printf("%-28s median %.3f ms min %.3f ms  %.1f TFLOP/s  %.1f%% of the peak at %u MHz\n",
           name, med * 1e3, ms[0], tf, 100 * tf / peak_max, maxclk);
  };
  auto cub = [&] { cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, cr, n); };
  timeit("cublasSgemm", cub, cr, false);
  CK(cudaMemcpy(ref.data(), cr, c * 4, cudaMemcpyDeviceToHost));
  for (int round = 0; round < 2; ++round) {
    timeit("128x128x8 t8x8 (256 thr)", [&] { launch<128, 128, 8, 8, 8>(n, a, b, co); }, co, round == 0);
    timeit("128x128x16 t8x8 (256 thr)", [&] { launch<128, 128, 16, 8, 8>(n, a, b, co); }, co, round == 0);
    timeit("128x256x8 t8x16 (256 thr)", [&] { launch<128, 256, 8, 8, 16>(n, a, b, co); }, co, round == 0);
    timeit("256x128x8 t16x8 (256 thr)", [&] { launch<256, 128, 8, 16, 8>(n, a, b, co); }, co, round == 0);
    timeit("128x128x8 t8x8 warp 8x4", [&] { launch<128, 128, 8, 8, 8, 8>(n, a, b, co); }, co, round == 0);
    timeit("128x256x8 t8x16 warp 8x4", [&] { launch<128, 256, 8, 8, 16, 8>(n, a, b, co); }, co, round == 0);
    timeit("256x128x8 t16x8 warp 8x4", [&] { launch<256, 128, 8, 16, 8, 8>(n, a, b, co); }, co, round == 0);
    timeit("128x256x16 t8x16 warp 8x4", [&] { launch<128, 256, 16, 8, 16, 8>(n, a, b, co); }, co, round == 0);
    timeit("cublasSgemm", cub, cr, false);
  }
}
