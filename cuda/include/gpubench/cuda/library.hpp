#pragma once
// The one way gpubench opens a library at run time (dlopen) instead of linking it: cuBLAS,
// cuBLASLt, CUPTI and NVML are loaded when first needed, so a machine without one of them still
// runs everything else, and a missing one becomes a message naming what to install. Which file to
// load may be named by the user (GPUBENCH_*_LIBRARY); that is read from the environment in one
// place (engine/environment.hpp) and handed down here with set_library_file() before anything
// loads: nothing in cuda/ reads the environment.
#include <string>
#include <vector>

namespace gpubench::cuda {

/// The libraries whose file a user or a test may name.
enum class library_id { cublaslt, cupti, nvml };

/// The one file to load for `id` from now on; "" restores the usual search. Takes effect for a
/// library not yet loaded.
void set_library_file(library_id id, std::string path);
/// What set_library_file() set ("" when nothing).
[[nodiscard]] std::string library_file(library_id id);

/// Where a loader of one of NVIDIA's CUDA libraries looks for the file `file` (of CUDA `major`),
/// in order: the system search (LD_LIBRARY_PATH, the executable's RUNPATH, ld.so.cache), NVIDIA's
/// pip wheel layout next to the executable's Python environment, then /usr/local/cuda/lib64.
[[nodiscard]] std::vector<std::string> cuda_library_candidates(const std::string& file, int major);

/// The candidates for `id`: the file set_library_file() named, else `defaults`.
[[nodiscard]] std::vector<std::string> library_candidates(library_id id,
                                                          std::vector<std::string> defaults);

/// A library opened from the first of its candidate paths that loads. It stays open for the life
/// of the process (its entry points may be called from static destructors).
class runtime_library {
public:
  explicit runtime_library(const std::vector<std::string>& candidates);
  [[nodiscard]] bool loaded() const noexcept { return handle_ != nullptr; }
  /// Each candidate that failed and why, on one line: "PATH (REASON); PATH (REASON)".
  [[nodiscard]] const std::string& tried() const noexcept { return tried_; }
  /// The entry point `name` as a `Fn`, or nullptr (also when nothing is loaded).
  template <typename Fn>
  [[nodiscard]] Fn symbol(const char* name) const noexcept {
    return reinterpret_cast<Fn>(raw_symbol(name)); // NOLINT(*-reinterpret-cast): dlsym's contract
  }

private:
  [[nodiscard]] void* raw_symbol(const char* name) const noexcept;
  void* handle_ = nullptr;
  std::string tried_;
};

/// The library opened from `candidates`, opened on the first call with that list and the same
/// object for the life of the process after (a file named later by set_library_file() is a
/// different list, opened then).
const runtime_library& open_library(const std::vector<std::string>& candidates);

} // namespace gpubench::cuda
