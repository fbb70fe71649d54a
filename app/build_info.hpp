#pragma once
// What this binary was built with: shown by --version and `gpubench doctor`.
#include <string>
#include <vector>

namespace gpubench::app {

struct cuda_arch {
  int major = 0;
  int minor = 0;
  bool sass = false;          ///< machine code (NN-real)
  bool ptx = false;           ///< PTX the driver can compile for newer GPUs (NN-virtual)
  bool arch_specific = false; ///< sm_90a and the like: runs on that exact GPU only
};

/// CMAKE_CUDA_ARCHITECTURES as configured ("80-real;90-real;90-virtual").
[[nodiscard]] std::string cuda_architectures_text();
/// The parsed list; empty when the text is symbolic ("native", "all").
[[nodiscard]] std::vector<cuda_arch> cuda_architectures();
/// Whether the build has machine code / PTX the driver can run on a GPU of compute capability
/// major.minor: SASS runs on the same major with an equal or higher minor; PTX on any equal or
/// newer GPU.
[[nodiscard]] bool has_sass_for(int major, int minor);
[[nodiscard]] bool has_ptx_for(int major, int minor);

/// "13.0": the CUDA runtime headers this binary was compiled against.
[[nodiscard]] std::string cuda_runtime_built();
/// "static" or "shared".
[[nodiscard]] std::string cuda_runtime_linkage();
[[nodiscard]] bool mpi_compiled_in();
/// The multi-line text of --version.
[[nodiscard]] std::string version_text();

} // namespace gpubench::app
