// Definitions of the cuBLAS entry points gpubench calls, forwarding to the library loaded on first
// use. The prototypes come from cublas_v2.h, so a signature that drifts fails to compile.
#include "gpubench/cuda/cublas_loader.hpp"

#include "gpubench/cuda/error.hpp"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <system_error>

namespace gpubench::cuda {

namespace {

#define GPUBENCH_STR2(x) #x
#define GPUBENCH_STR(x) GPUBENCH_STR2(x)
constexpr const char* soname = "libcublas.so." GPUBENCH_STR(CUBLAS_VER_MAJOR);

struct loaded {
  std::once_flag once;
  void* handle = nullptr;
  std::string why;
};

loaded& state() {
  static loaded s;
  return s;
}

void load_once(loaded& s) {
  std::string tried;
  for (const auto& path : cublas_candidates()) {
    s.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (s.handle != nullptr) return;
    const char* err = dlerror();
    tried += fmt::format("\n  {}: {}", path, err != nullptr ? err : "not loadable");
  }
  s.why = fmt::format(
      "cuBLAS ({}) was not found; the pipeline needs it. Install it with pip "
      "(pip install nvidia-cublas=={}.*), or NVIDIA's Debian package libcublas-{}-0, or point "
      "LD_LIBRARY_PATH at a CUDA Toolkit's lib64. Tried:{}",
      soname, CUBLAS_VER_MAJOR, CUBLAS_VER_MAJOR, tried);
}

template <typename Fn>
Fn entry(const char* name) {
  void* handle = load_cublas();
  void* sym = dlsym(handle, name);
  if (sym == nullptr)
    throw no_device_error(fmt::format("cuBLAS ({}) has no entry point {}", soname, name));
  return reinterpret_cast<Fn>(sym);
}

} // namespace

const char* cublas_soname() noexcept { return soname; }

std::vector<std::string> cuda_library_candidates(const std::string& file, int major) {
  std::vector<std::string> out{file};
  // NVIDIA's wheels put the library in site-packages/nvidia/cu<major>/lib; the gpubench wheel
  // installs the executable in site-packages/gpubench/bin, and pip's scripts folder (bin/) sits
  // beside lib/pythonX.Y/site-packages. RUNPATH covers the first; this covers a copied binary.
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto sub = std::filesystem::path("nvidia") / fmt::format("cu{}", major) / "lib" / file;
    out.push_back((exe.parent_path().parent_path().parent_path() / sub).string());
  }
  out.push_back((std::filesystem::path("/usr/local/cuda/lib64") / file).string());
  return out;
}

std::vector<std::string> cublas_candidates() {
  return cuda_library_candidates(soname, CUBLAS_VER_MAJOR);
}

void* load_cublas() {
  auto& s = state();
  std::call_once(s.once, [&s] { load_once(s); });
  if (s.handle == nullptr) throw no_device_error(s.why);
  return s.handle;
}

bool try_load_cublas(std::string& why) noexcept {
  try {
    (void)load_cublas();
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

} // namespace gpubench::cuda

using gpubench::cuda::entry;

// The entry points below are the ones cublas_v2.h maps gpubench's calls to.
extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  return entry<decltype(&cublasCreate_v2)>("cublasCreate_v2")(handle);
}
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  return entry<decltype(&cublasDestroy_v2)>("cublasDestroy_v2")(handle);
}
cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return entry<decltype(&cublasSetStream_v2)>("cublasSetStream_v2")(handle, stream);
}
cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace,
                                                  size_t bytes) {
  return entry<decltype(&cublasSetWorkspace_v2)>("cublasSetWorkspace_v2")(handle, workspace, bytes);
}
cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return entry<decltype(&cublasSetMathMode)>("cublasSetMathMode")(handle, mode);
}
cublasStatus_t CUBLASWINAPI cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
  return entry<decltype(&cublasSetAtomicsMode)>("cublasSetAtomicsMode")(handle, mode);
}
cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle,
                                                    cublasPointerMode_t mode) {
  return entry<decltype(&cublasSetPointerMode_v2)>("cublasSetPointerMode_v2")(handle, mode);
}
const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  return entry<decltype(&cublasGetStatusName)>("cublasGetStatusName")(status);
}
cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C,
                                           int ldc) {
  return entry<decltype(&cublasSgemm_v2)>("cublasSgemm_v2")(handle, transa, transb, m, n, k, alpha,
                                                            A, lda, B, ldb, beta, C, ldc);
}

} // extern "C"
