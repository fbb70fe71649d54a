#pragma once
// What cuBLAS and cuBLASLt share in being loaded at run time (cublas_loader.cpp,
// pipeline/cublaslt_loader.cpp): opening the library on first use, the message that names what to
// install when it is missing, the non-throwing check, and the lookup of an entry point. Each
// loader states its library once, as a blas_library.
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/library.hpp"

#include <string>
#include <vector>

namespace gpubench::cuda::detail {

struct blas_library {
  const char* name;   ///< "cuBLAS", as messages call it
  const char* soname; ///< "libcublas.so.13"
  std::vector<std::string> (*candidates)();
  const char* purpose;          ///< after "was not found; ": what needs it
  const char* pip_note;         ///< after the pip package's name ("" or ", which ships ...")
  const char* old_library_note; ///< after a missing entry point's name ("" or "; ... or later")
  int major;                    ///< the CUDA major version of the packages named
};

/// The library, opened on first use; throws no_device_error naming it, the packages that provide
/// it and every path tried, when none loads.
const runtime_library& load(const blas_library& b);
/// load() without throwing: false with the message in `why`.
[[nodiscard]] bool try_load(const blas_library& b, std::string& why) noexcept;
/// The entry point `name` of the loaded library (loading it first); throws no_device_error when
/// the library (an older one) lacks it.
void* entry_point(const blas_library& b, const char* name);

template <typename Fn>
Fn entry(const blas_library& b, const char* name) {
  return reinterpret_cast<Fn>(entry_point(b, name)); // NOLINT(*-reinterpret-cast): dlsym's contract
}

} // namespace gpubench::cuda::detail
