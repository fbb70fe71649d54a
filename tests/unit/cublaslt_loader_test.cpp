// cuBLASLt missing: the loader's message names the library and what to install, and the failure
// is the no-device kind (exit 77). The library is only dlopen()ed, so this runs without a GPU.
#include "gpubench/cuda/cublas_loader.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/environment.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace gpubench;

TEST_CASE("a missing cuBLASLt is reported with the library's name and what to install",
          "[pipeline][loader]") {
  const std::string soname = cuda::cublaslt_soname();
  CHECK(soname.rfind("libcublasLt.so.", 0) == 0);
  {
    // The file is read on the first load of this process; no other unit test loads cuBLASLt.
    const environment_override missing(
        [](environment& e) { e.cublaslt_library = "/nonexistent/libcublasLt.so.0"; });
    CHECK(cuda::cublaslt_candidates() == std::vector<std::string>{"/nonexistent/libcublasLt.so.0"});
    std::string why;
    CHECK_FALSE(cuda::try_load_cublaslt(why));
    CHECK(why.find(soname) != std::string::npos);
    CHECK(why.find("pip install nvidia-cublas==") != std::string::npos);
    CHECK(why.find("libcublas-") != std::string::npos);
    CHECK(why.find("/nonexistent/libcublasLt.so.0") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos); // one line, as every error message
    CHECK_THROWS_AS(cuda::load_cublaslt(), cuda::no_device_error);
  }
  CHECK(cuda::cublaslt_candidates().front() == soname);
}
