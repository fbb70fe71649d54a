#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
extern "C" void scipy_cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
extern "C" void scipy_openblas_set_num_threads(int);
double* get(size_t n, bool huge) {
  if (!huge) { auto* p = (double*)malloc(n * 8); return p; }
  void* p = nullptr; posix_memalign(&p, 2 << 20, n * 8); madvise(p, n * 8, MADV_HUGEPAGE); return (double*)p;
}
int main(int argc, char** argv) {
  int n = atoi(argv[1]); int rounds = atoi(argv[2]);
  scipy_openblas_set_num_threads(atoi(argv[3]));
  for (int r = 0; r < rounds; ++r) for (int h = 0; h < 2; ++h) {
    size_t c = size_t(n) * n;
    double *a = get(c, h), *b = get(c, h), *cc = get(c, h);
    for (size_t i = 0; i < c; ++i) { a[i] = (i % 7) * 0.1; b[i] = (i % 5) * 0.2; cc[i] = 0; }
    double best = 1e9, sum = 0;
    for (int s = 0; s < 3; ++s) {
      auto t0 = std::chrono::steady_clock::now();
      scipy_cblas_dgemm(102, 111, 111, n, n, n, 1.0, a, n, b, n, 0.0, cc, n);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = t < best ? t : best; sum += t;
    }
    printf("n %d round %d %s best %.1f ms mean %.1f ms\n", n, r, h ? "huge " : "plain", best * 1e3, sum / 3 * 1e3);
    FILE* f = fopen("/proc/self/smaps_rollup", "r"); char line[256];
    while (f && fgets(line, sizeof line, f)) if (strncmp(line, "AnonHugePages", 13) == 0) printf("  %s", line);
    if (f) fclose(f);
    free(a); free(b); free(cc);
  }
}
