#include "gpubench/engine/environment.hpp"

#include "gpubench/cuda/library.hpp"

#include <cstring>
#include <utility>

extern char** environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace gpubench {

namespace {

std::string variable_or_empty(const std::map<std::string, std::string, std::less<>>& vars,
                              std::string_view name) {
  const auto it = vars.find(name);
  return it == vars.end() ? std::string() : it->second;
}

void hand_down(const environment& e) {
  cuda::set_library_file(cuda::library_id::nvml, e.nvml_library);
  cuda::set_library_file(cuda::library_id::cublaslt, e.cublaslt_library);
  cuda::set_library_file(cuda::library_id::cupti, e.cupti_library);
}

std::map<std::string, std::string, std::less<>> read_environ() {
  std::map<std::string, std::string, std::less<>> vars;
  for (char** e = environ; *e != nullptr; ++e) { // NOLINT(cppcoreguidelines-pro-bounds-*)
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    vars.emplace(std::string(*e, static_cast<std::size_t>(eq - *e)), std::string(eq + 1));
  }
  return vars;
}

environment& current() {
  static environment e = [] {
    environment read = environment_from(read_environ());
    hand_down(read);
    return read;
  }();
  return e;
}

} // namespace

const char* environment::find(std::string_view name) const {
  const auto it = all.find(name);
  return it == all.end() ? nullptr : it->second.c_str();
}

environment environment_from(const std::map<std::string, std::string, std::less<>>& vars) {
  environment e;
  e.nvml_library = variable_or_empty(vars, "GPUBENCH_NVML_LIBRARY");
  e.cublaslt_library = variable_or_empty(vars, "GPUBENCH_CUBLASLT_LIBRARY");
  e.cupti_library = variable_or_empty(vars, "GPUBENCH_CUPTI_LIBRARY");
  e.nvidia_version_file = variable_or_empty(vars, "GPUBENCH_NVIDIA_VERSION_FILE");
  e.pretend_no_opencv = variable_or_empty(vars, "GPUBENCH_TEST_PRETEND_NO_OPENCV") == "1";
  e.opencv_pool_threading = variable_or_empty(vars, "GPUBENCH_TEST_OPENCV_THREADING") == "opencv";
  e.pretend_no_mpi = variable_or_empty(vars, "GPUBENCH_TEST_PRETEND_NO_MPI") == "1";
  e.pipeline_one_thread = variable_or_empty(vars, "GPUBENCH_PIPELINE_ONE_THREAD") == "1";
  e.mpi_test_fail = variable_or_empty(vars, "GPUBENCH_MPI_TEST_FAIL");
  e.test_slowdown = variable_or_empty(vars, "GPUBENCH_TEST_SLOWDOWN");
  e.inject_fault = variable_or_empty(vars, "GPUBENCH_INJECT_FAULT");
  e.all = vars;
  return e;
}

const environment& process_environment() { return current(); }

environment_override::environment_override(const std::function<void(environment&)>& edit)
    : saved_(current()) {
  edit(current());
  hand_down(current());
}

environment_override::~environment_override() {
  current() = std::move(saved_);
  hand_down(current());
}

} // namespace gpubench
