#pragma once
// The process's environment, read in one place: once, the first time it is asked (main asks
// first, before any thread), and handed down as values. The library files a user may name go down
// to cuda/ and telemetry/ through cuda::set_library_file(), so nothing below the engine reads
// the environment; the benchmarks and app/ read the typed fields here. docs/usage.md,
// "Environment variables", lists every variable.
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gpubench {

struct environment {
  // Files loaded or read instead of the usual ones ("" when unset).
  std::string nvml_library;        ///< GPUBENCH_NVML_LIBRARY
  std::string cublaslt_library;    ///< GPUBENCH_CUBLASLT_LIBRARY
  std::string cupti_library;       ///< GPUBENCH_CUPTI_LIBRARY
  std::string nvidia_version_file; ///< GPUBENCH_NVIDIA_VERSION_FILE
  // Test switches (docs/reliability.md, docs/multi-gpu.md, docs/augment.md, docs/pipeline.md).
  bool pretend_no_opencv = false;     ///< GPUBENCH_TEST_PRETEND_NO_OPENCV=1
  bool opencv_pool_threading = false; ///< GPUBENCH_TEST_OPENCV_THREADING=opencv
  bool pretend_no_mpi = false;        ///< GPUBENCH_TEST_PRETEND_NO_MPI=1
  bool pipeline_one_thread = false;   ///< GPUBENCH_PIPELINE_ONE_THREAD=1
  std::string mpi_test_fail;          ///< GPUBENCH_MPI_TEST_FAIL (checked where it is used)
  std::string test_slowdown;          ///< GPUBENCH_TEST_SLOWDOWN (test_hooks.hpp)
  std::string inject_fault;           ///< GPUBENCH_INJECT_FAULT (test_hooks.hpp)

  /// Every variable of the process as it started, for what reads other programs' variables (an
  /// MPI launcher's, COLUMNS, PYTHONPATH for the HTML report's child process).
  std::map<std::string, std::string, std::less<>> all;
  /// The value of `name` in `all`, nullptr when unset.
  [[nodiscard]] const char* find(std::string_view name) const;
};

/// An environment read from `vars` (each variable by name).
environment environment_from(const std::map<std::string, std::string, std::less<>>& vars);

/// The process's environment, read on the first call; that call also hands the library files
/// down (cuda::set_library_file).
const environment& process_environment();

/// Test seam: while it lives, process_environment() is the process's, edited by `edit`, and the
/// library files follow it.
class environment_override {
public:
  explicit environment_override(const std::function<void(environment&)>& edit);
  environment_override(const environment_override&) = delete;
  environment_override& operator=(const environment_override&) = delete;
  ~environment_override();

private:
  environment saved_;
};

} // namespace gpubench
