// Exploration only: event vs CUPTI vs graph timing of a warm vecadd, behind a blocking kernel.
#include <cuda_runtime.h>
#include <cupti.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
#define CU(x) do { CUptiResult r = (x); if (r != CUPTI_SUCCESS) { const char* s; cuptiGetResultString(r, &s); printf("%s: %s\n", #x, s); exit(1);} } while (0)

__device__ unsigned long long gns() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(volatile int* f) { unsigned long long t0 = gns(); while (f[0] == 0) { if (gns() - t0 > 1000000000ull) { f[1] = 1; break; } } }
__global__ void empty_kernel() {}
__global__ void vadd(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

static std::vector<double> cupti_ns;
static void CUPTIAPI buf_req(uint8_t** buf, size_t* size, size_t* max) {
  *size = 8 << 20; *buf = (uint8_t*)aligned_alloc(8, *size); *max = 0;
}
static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      auto* k = (CUpti_ActivityKernel10*)rec;
      if (strstr(k->name, "vadd")) cupti_ns.push_back(double(k->end - k->start));
    }
  }
  free(buf);
}

static void report(const char* what, size_t n, std::vector<double> us, double bytes) {
  std::sort(us.begin(), us.end());
  double mean = 0, sq = 0; for (double x : us) mean += x; mean /= us.size();
  for (double x : us) sq += (x - mean) * (x - mean);
  double sd = std::sqrt(sq / (us.size() - 1));
  double med = us[us.size() / 2];
  printf("%-22s n=%-9zu samples=%zu median=%8.3f us p10=%8.3f p90=%8.3f relsd=%5.2f%% -> %6.3f TB/s\n", what, n, us.size(), med,
         us[us.size() / 10], us[us.size() * 9 / 10], 100 * sd / mean, bytes / (med * 1e-6) / 1e12);
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int* hf; CK(cudaHostAlloc(&hf, 8, cudaHostAllocMapped)); int* df; CK(cudaHostGetDevicePointer((void**)&df, hf, 0));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int S = 300;
  for (size_t n : {size_t(1) << 20, size_t(2) << 20, size_t(4) << 20, size_t(16) << 20}) {
    float *a, *b, *c; CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMalloc(&c, n * 4));
    CK(cudaMemset(a, 0, n * 4)); CK(cudaMemset(b, 0, n * 4));
    size_t n4 = n / 4; int threads = 256; int blocks = (int)std::min<size_t>((n4 + threads - 1) / threads, (size_t)sms * 8);
    double bytes = 12.0 * n;
    auto launch = [&] { vadd<<<blocks, threads, 0, s>>>((float4*)a, (float4*)b, (float4*)c, n4); };
    hf[0] = 1; hf[1] = 0; launch(); empty_kernel<<<1, 32, 0, s>>>(); spin<<<1,1,0,s>>>(df); CK(cudaStreamSynchronize(s));
    auto held = [&](auto body) {
      hf[0] = 0; std::atomic_thread_fence(std::memory_order_seq_cst);
      spin<<<1, 1, 0, s>>>(df);
      CK(cudaEventRecord(e0, s)); body(); CK(cudaEventRecord(e1, s));
      std::atomic_thread_fence(std::memory_order_seq_cst); hf[0] = 1;
      CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms * 1e3;
    };
    std::vector<double> v;
    for (int i = 0; i < 20; ++i) held(launch);
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(held(launch)); report("event 1 kernel", n, v, bytes);
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(held([&]{ launch(); launch(); })); report("event 2 kernels (/2)", n, v, 2 * bytes);
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(held([&]{ empty_kernel<<<1,32,0,s>>>(); })); report("event empty kernel", n, v, 0);
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(held([&]{})); report("event nothing", n, v, 0);
    // graph: event record nodes + kernel
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    CK(cudaEventRecordWithFlags(e0, s, cudaEventRecordExternal)); launch(); CK(cudaEventRecordWithFlags(e1, s, cudaEventRecordExternal));
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0)); CK(cudaGraphUpload(ge, s));
    auto gheld = [&] {
      hf[0] = 0; std::atomic_thread_fence(std::memory_order_seq_cst);
      spin<<<1, 1, 0, s>>>(df); CK(cudaGraphLaunch(ge, s));
      std::atomic_thread_fence(std::memory_order_seq_cst); hf[0] = 1;
      CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms * 1e3; };
    for (int i = 0; i < 20; ++i) gheld();
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(gheld()); report("graph event 1 kernel", n, v, bytes);
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    // CUPTI
    CU(cuptiActivityRegisterCallbacks(buf_req, buf_done));
    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    launch(); empty_kernel<<<1, 32, 0, s>>>(); CK(cudaStreamSynchronize(s));
    for (int i = 0; i < 20; ++i) held(launch);
    CU(cuptiActivityFlushAll(1)); cupti_ns.clear();
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(held(launch));
    CU(cuptiActivityFlushAll(1));
    report("event w/ cupti on", n, v, bytes);
    std::vector<double> cu; for (double x : cupti_ns) cu.push_back(x * 1e-3);
    report("cupti kernel", n, cu, bytes);
    cupti_ns.clear();
    v.clear(); for (int i = 0; i < S; ++i) v.push_back(held([&]{ launch(); launch(); launch(); launch(); launch(); launch(); launch(); launch(); launch(); launch(); }) / 10);
    CU(cuptiActivityFlushAll(1));
    cu.clear(); for (double x : cupti_ns) cu.push_back(x * 1e-3);
    report("cupti b2b x10 kernel", n, cu, bytes);
    report("event x10 (/10)", n, v, bytes);
    CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CU(cuptiActivityFlushAll(1)); cupti_ns.clear();
    CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(c));
    printf("\n");
  }
  printf("spin timeouts flag=%d\n", hf[1]);
  return 0;
}
