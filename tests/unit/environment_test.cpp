// The environment seam (engine/environment.hpp): every variable gpubench knows read into its
// typed field, the rest kept for lookup, and the library files handed down to cuda/.
#include "gpubench/engine/environment.hpp"

#include "gpubench/cuda/library.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using namespace gpubench;

TEST_CASE("environment: each known variable lands in its field", "[environment]") {
  const std::map<std::string, std::string, std::less<>> vars{
      {"GPUBENCH_NVML_LIBRARY", "/x/nvml.so"},   {"GPUBENCH_CUBLASLT_LIBRARY", "/x/lt.so"},
      {"GPUBENCH_CUPTI_LIBRARY", "/x/cupti.so"}, {"GPUBENCH_NVIDIA_VERSION_FILE", "/x/version"},
      {"GPUBENCH_TEST_PRETEND_NO_OPENCV", "1"},  {"GPUBENCH_TEST_OPENCV_THREADING", "opencv"},
      {"GPUBENCH_TEST_PRETEND_NO_MPI", "1"},     {"GPUBENCH_PIPELINE_ONE_THREAD", "1"},
      {"GPUBENCH_MPI_TEST_FAIL", "1:2:stall"},   {"GPUBENCH_TEST_SLOWDOWN", "kernel:10%"},
      {"GPUBENCH_INJECT_FAULT", "vecadd:1"},     {"OMPI_COMM_WORLD_SIZE", "4"},
  };
  const environment e = environment_from(vars);
  CHECK(e.nvml_library == "/x/nvml.so");
  CHECK(e.cublaslt_library == "/x/lt.so");
  CHECK(e.cupti_library == "/x/cupti.so");
  CHECK(e.nvidia_version_file == "/x/version");
  CHECK(e.pretend_no_opencv);
  CHECK(e.opencv_pool_threading);
  CHECK(e.pretend_no_mpi);
  CHECK(e.pipeline_one_thread);
  CHECK(e.mpi_test_fail == "1:2:stall");
  CHECK(e.test_slowdown == "kernel:10%");
  CHECK(e.inject_fault == "vecadd:1");
  REQUIRE(e.find("OMPI_COMM_WORLD_SIZE") != nullptr);
  CHECK(std::string(e.find("OMPI_COMM_WORLD_SIZE")) == "4");
  CHECK(e.find("NOT_SET_ANYWHERE") == nullptr);
}

TEST_CASE("environment: switches take only their documented value", "[environment]") {
  const environment e = environment_from({{"GPUBENCH_TEST_PRETEND_NO_OPENCV", "yes"},
                                          {"GPUBENCH_TEST_OPENCV_THREADING", "per-image"},
                                          {"GPUBENCH_PIPELINE_ONE_THREAD", "0"}});
  CHECK_FALSE(e.pretend_no_opencv);
  CHECK_FALSE(e.opencv_pool_threading);
  CHECK_FALSE(e.pipeline_one_thread);
  CHECK(environment_from({}).nvml_library.empty());
}

TEST_CASE("environment: an override hands its library files down and restores them",
          "[environment]") {
  const std::string before = cuda::library_file(cuda::library_id::cupti);
  {
    const environment_override o([](environment& e) { e.cupti_library = "/x/cupti.so.0"; });
    CHECK(process_environment().cupti_library == "/x/cupti.so.0");
    CHECK(cuda::library_file(cuda::library_id::cupti) == "/x/cupti.so.0");
    CHECK(cuda::library_candidates(cuda::library_id::cupti, {"a", "b"}) ==
          std::vector<std::string>{"/x/cupti.so.0"});
  }
  CHECK(cuda::library_file(cuda::library_id::cupti) == before);
  CHECK(process_environment().cupti_library == before);
}

TEST_CASE("runtime_library: a file that cannot load says which and why, on one line",
          "[environment]") {
  const cuda::runtime_library lib({"/nonexistent/a.so", "/nonexistent/b.so"});
  CHECK_FALSE(lib.loaded());
  CHECK(lib.symbol<void (*)()>("anything") == nullptr);
  CHECK_THAT(lib.tried(),
             Catch::StartsWith("/nonexistent/a.so (") && Catch::Contains("; /nonexistent/b.so ("));
  CHECK(lib.tried().find('\n') == std::string::npos);
}
