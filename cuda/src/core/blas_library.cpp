// The shared part of the cuBLAS and cuBLASLt loaders (blas_library.hpp).
#include "core/blas_library.hpp"

#include <fmt/format.h>

namespace gpubench::cuda::detail {

const runtime_library& load(const blas_library& b) {
  const runtime_library& lib = open_library(b.candidates());
  if (!lib.loaded())
    throw no_device_error(fmt::format(
        "{} ({}) was not found; {}. Install it with pip (pip install nvidia-cublas=={}.*{}), or "
        "NVIDIA's Debian package libcublas-{}-0, or point LD_LIBRARY_PATH at a CUDA Toolkit's "
        "lib64. Tried: {}",
        b.name, b.soname, b.purpose, b.major, b.pip_note, b.major, lib.tried()));
  return lib;
}

bool try_load(const blas_library& b, std::string& why) noexcept {
  try {
    (void)load(b);
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

void* entry_point(const blas_library& b, const char* name) {
  void* const fn = load(b).symbol<void*>(name);
  if (fn == nullptr)
    throw no_device_error(
        fmt::format("{} ({}) has no entry point {}{}", b.name, b.soname, name, b.old_library_note));
  return fn;
}

} // namespace gpubench::cuda::detail
