// Build facts come from compile definitions set in cmake/packaging.cmake.
#include "build_info.hpp"

#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/engine/env.hpp"
#include "gpubench/gemm/gemm_cpu.hpp"
#include "gpubench/scale/mpi_run.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cctype>
#include <sstream>

#ifndef GPUBENCH_CUDA_ARCHITECTURES
#define GPUBENCH_CUDA_ARCHITECTURES "unknown"
#endif
#ifndef GPUBENCH_CUDART_LINKAGE
#define GPUBENCH_CUDART_LINKAGE "shared"
#endif

namespace gpubench::app {

std::string cuda_architectures_text() { return GPUBENCH_CUDA_ARCHITECTURES; }

std::vector<cuda_arch> cuda_architectures() {
  std::vector<cuda_arch> out;
  std::istringstream in(cuda_architectures_text());
  std::string item;
  while (std::getline(in, item, ',')) { // cmake/packaging.cmake writes the list with commas
    std::size_t digits = 0;
    while (digits < item.size() && std::isdigit(static_cast<unsigned char>(item[digits])) != 0)
      ++digits;
    if (digits < 2) continue; // "native", "all", "all-major": nothing to compare against
    const int number = std::stoi(item.substr(0, digits));
    cuda_arch a;
    a.major = number / 10;
    a.minor = number % 10;
    const std::string rest = item.substr(digits);
    a.arch_specific = !rest.empty() && (rest[0] == 'a' || rest[0] == 'f');
    const bool real_only = rest.find("-real") != std::string::npos;
    const bool virtual_only = rest.find("-virtual") != std::string::npos;
    a.sass = !virtual_only;
    a.ptx = !real_only;
    out.push_back(a);
  }
  return out;
}

bool has_sass_for(int major, int minor) {
  for (const auto& a : cuda_architectures())
    if (a.sass && a.major == major && (a.arch_specific ? a.minor == minor : a.minor <= minor))
      return true;
  return false;
}

bool has_ptx_for(int major, int minor) {
  for (const auto& a : cuda_architectures())
    if (a.ptx && !a.arch_specific && (a.major < major || (a.major == major && a.minor <= minor)))
      return true;
  return false;
}

std::string cuda_runtime_built() {
  return fmt::format("{}.{}", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
}

std::string cuda_runtime_linkage() { return GPUBENCH_CUDART_LINKAGE; }

// The library knows whether MPI was built in (lib/CMakeLists.txt finds it); ask it, not a define
// of the app's own that could disagree.
bool mpi_compiled_in() { return mpi_built_in(); }

std::string version_text() {
  return fmt::format(
      "gpubench {} (git {})\nSources: sha256 {}\nCUDA runtime: {} ({})\nCUDA architectures: "
      "{}\n{}\nOpenCV: {}\nOpenBLAS: {}",
      GPUBENCH_VERSION, git_revision(), source_hash(), cuda_runtime_built(), cuda_runtime_linkage(),
      cuda_architectures_text(), mpi_description(), augment_opencv::description(),
      openblas_built_in() ? "built in (" + openblas_config() + "; gemm's CPU row)"
                          : std::string("not built in (gemm has no CPU row)"));
}

} // namespace gpubench::app
