// gemm through the driver: every dtype and layout at a small shape with odd sizes (every element
// checked against the f64 reference, the output poisoned first), every dtype at a large square
// shape, and the rows and figures each point carries.
#include "gpubench/cuda/device.hpp"
#include "gpubench/gemm/gemm_bench.hpp"
#include "gpubench/gemm/gemm_cpu.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

using namespace gpubench;

namespace {

result run_gemm(const nlohmann::json& point) {
  common_options opts = short_run_options();
  run_context ctx(opts);
  return run_point(make_gemm_benchmark(), point, ctx);
}

} // namespace

TEST_CASE("gemm matches the f64 reference for every dtype and layout at odd shapes",
          "[gemm][sanitize]") {
  const auto type = GENERATE(std::string("f64"), std::string("f32"), std::string("tf32"),
                             std::string("bf16"), std::string("f16"));
  const auto layout = GENERATE(std::string("nn"), std::string("nt"), std::string("tn"));
  const nlohmann::json point{{"m", 67},       {"n", 45},          {"k", 129},
                             {"dtype", type}, {"layout", layout}, {"device", 0}};
  INFO(point.dump());
  const auto r = run_gemm(point);
  REQUIRE(r.status == result_status::ok);
  CHECK(r.verify.performed);
  CHECK(r.verify.passed);
  // kernel and end_to_end, every element each; and OpenBLAS's product where built in.
  CHECK(r.verify.checked == (openblas_built_in() ? 3U : 2U) * 67U * 45U);
  for (const char* name : {"kernel", "h2d", "d2h", "end_to_end"}) {
    const auto* m = r.find(name);
    REQUIRE(m != nullptr);
    CHECK(m->stats.count >= 2);
    CHECK(m->stats.min > 0);
  }
  CHECK(r.find("kernel")->work.items == 2.0 * 67 * 45 * 129);
  CHECK(r.find("kernel")->description.find("cuBLASLt algorithm") != std::string::npos);
  CHECK(r.derived.contains("kernel_peak_fraction"));
  CHECK((r.find("cpu_openblas") != nullptr) == openblas_built_in());
}

TEST_CASE("gemm matches the f64 reference for every dtype at 2048 x 2048 x 2048", "[gemm]") {
  const auto type = GENERATE(std::string("f64"), std::string("f32"), std::string("tf32"),
                             std::string("bf16"), std::string("f16"));
  const nlohmann::json point{{"m", 2048},     {"n", 2048},      {"k", 2048},
                             {"dtype", type}, {"layout", "nn"}, {"device", 0}};
  INFO(point.dump());
  const auto r = run_gemm(point);
  REQUIRE(r.status == result_status::ok);
  CHECK(r.verify.passed);
  // Each checked path names how close its worst element came to its bound.
  for (const auto& [path, v] : r.verify.details.items()) {
    const auto method = v.value("method", std::string());
    INFO(path << ": " << method);
    CHECK(method.find("worst element at") != std::string::npos);
  }
  const double fraction = r.derived.value("kernel_peak_fraction", 0.0);
  CHECK(fraction > 0.05); // a tensor-core shape far below its peak is a wrong algorithm or clock
  CHECK(fraction < 1.05); // above the theoretical peak is a wrong table or timer
}

TEST_CASE("gemm fp8: E4M3 inputs, bf16 out, verified in the tn layout; others skipped", "[gemm]") {
  // A small shape the FP8 kernels' alignment allows (multiples of 16) and a large square one.
  const auto side = GENERATE(std::int64_t{0}, std::int64_t{2048});
  const nlohmann::json point{{"m", side == 0 ? 96 : side},
                             {"n", side == 0 ? 48 : side},
                             {"k", side == 0 ? 272 : side},
                             {"dtype", "fp8"},
                             {"layout", "tn"},
                             {"device", 0}};
  INFO(point.dump());
  const auto r = run_gemm(point);
  const auto info = cuda::query_device(0);
  if (info.cc_major * 10 + info.cc_minor < 89) {
    CHECK(r.status == result_status::skipped);
    CHECK_THAT(r.reason, Catch::Contains("no FP8 tensor cores"));
    return;
  }
  INFO(r.reason);
  REQUIRE(r.status == result_status::ok);
  CHECK(r.verify.passed);
  const auto m = point["m"].get<double>();
  const auto n = point["n"].get<double>();
  const auto k = point["k"].get<double>();
  CHECK(r.verify.checked == (openblas_built_in() ? 3U : 2U) * static_cast<std::size_t>(m * n));
  const auto* kernel = r.find("kernel");
  REQUIRE(kernel != nullptr);
  CHECK(kernel->work.bytes == (m * k + k * n) + m * n * 2);
  INFO(r.verify.details.dump());
  if (side != 0) {
    const double fraction = r.derived.value("kernel_peak_fraction", 0.0);
    CHECK(fraction > 0.05);
    CHECK(fraction < 1.05);
  }
  if (info.cc_major < 10) {
    const auto nn = run_gemm(
        {{"m", 96}, {"n", 48}, {"k", 272}, {"dtype", "fp8"}, {"layout", "nn"}, {"device", 0}});
    CHECK(nn.status == result_status::skipped);
    CHECK_THAT(nn.reason, Catch::Contains("--layout tn"));
  }
  if (side == 0) {
    // k = 264 leaves A's and B's columns off 16 bytes: where cuBLASLt has no FP8 algorithm for
    // that (Hopper's), the point's error names the alignment; where it has one, it verifies.
    try {
      const auto odd = run_gemm(
          {{"m", 96}, {"n", 48}, {"k", 264}, {"dtype", "fp8"}, {"layout", "tn"}, {"device", 0}});
      INFO(odd.reason);
      REQUIRE(odd.status == result_status::ok);
      CHECK(odd.verify.passed);
    } catch (const std::exception& e) { // the plan's cuda_error, as the CLI reports it
      CHECK_THAT(std::string(e.what()),
                 Catch::Contains("multiple of 16 bytes") && Catch::Contains("264 bytes (k)"));
    }
  }
}

TEST_CASE("gemm --algos times the heuristic's first candidates and measures the fastest, verified",
          "[gemm]") {
  const auto type = GENERATE(std::string("f32"), std::string("bf16"));
  const nlohmann::json point{{"m", 1024},      {"n", 768},    {"k", 512},  {"dtype", type},
                             {"layout", "nn"}, {"device", 0}, {"algos", 6}};
  INFO(point.dump());
  const auto r = run_gemm(point);
  REQUIRE(r.status == result_status::ok);
  CHECK(r.params.value("algos", 0) == 6);
  CHECK(r.verify.passed);
  CHECK(r.verify.checked == (openblas_built_in() ? 3U : 2U) * 1024U * 768U);
  const int offered = r.derived.value("kernel_algorithm_candidates", 0);
  const int rank = r.derived.value("kernel_algorithm_rank", 0);
  CHECK(offered >= 1);
  CHECK(offered <= 6);
  CHECK(rank >= 1);
  CHECK(rank <= offered);
  const auto* kernel = r.find("kernel");
  REQUIRE(kernel != nullptr);
  INFO(kernel->description);
  CHECK_THAT(kernel->description,
             Catch::Contains(fmt::format("the fastest of the heuristic's first {} (number {} in "
                                         "its ranking",
                                         offered, rank)));
  // One median per candidate, in the heuristic's order.
  const auto& d = kernel->description;
  const auto from = d.find("order: ");
  const auto to = d.find(" ms)");
  REQUIRE(from != std::string::npos);
  REQUIRE(to > from);
  const auto list = d.substr(from, to - from);
  CHECK(std::count(list.begin(), list.end(), ',') == offered - 1);
}
