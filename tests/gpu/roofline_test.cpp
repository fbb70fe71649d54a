// The roofline kernel family against the CPU's chain, every element, output poisoned first: each
// type, intensities from one FMA on a lane in 16 to hundreds of FMAs, grids smaller than the work
// and device-filling; then one point through the driver, with its roofs.
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/roofline.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/roofline/roofline_bench.hpp"
#include "gpubench/roofline/roofline_cpu.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace gpubench;

TEST_CASE("every roofline kernel matches the CPU's chain on every element", "[roofline]") {
  thread_pool pool(4);
  const auto seed = fresh_seed();
  const std::size_t n = 8 * 12345;
  const auto t = GENERATE(dtype::f32, dtype::f64, dtype::f16, dtype::bf16);
  const double intensity = GENERATE(0.0625, 0.5, 3.0, 64.0);
  const int grid_kind = GENERATE(0, 1); // 7 blocks (each thread loops), the device-filling grid
  const auto w = roofline_work_for(t, n, intensity);
  INFO(dtype_name(t) << " intensity " << intensity << ": " << w.chain.fmas << " FMAs, every "
                     << w.chain.every << ", grid " << (grid_kind == 0 ? "7" : "device"));
  const std::size_t bytes = n * dtype_size(t);
  std::vector<std::byte> in(bytes), got(bytes);
  fill_roofline_input(t, in.data(), n, seed, pool);
  cuda::device_buffer<std::byte> din(bytes), dout(bytes);
  GPUBENCH_CUDA_TRY(cudaMemcpy(din.data(), in.data(), bytes, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemset(dout.data(), 0xFF, bytes));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  const auto [a, b] = roofline_constants(t);
  const int grid = grid_kind == 0 ? 7 : cuda::roofline_grid(t, 256);
  const cuda::stream s;
  cuda::launch_roofline(t, din.data(), dout.data(), n, w.chain, a, b, 256, grid, s.get());
  s.synchronize();
  GPUBENCH_CUDA_TRY(cudaMemcpy(got.data(), dout.data(), bytes, cudaMemcpyDeviceToHost));
  const auto v = check_roofline(t, n, w, seed, got.data(), pool);
  INFO(v.details.dump() << ", worst " << v.max_abs_error);
  CHECK(v.passed);
  CHECK(v.checked == n);
}

TEST_CASE("roofline launch arguments are checked", "[roofline]") {
  cuda::device_buffer<std::byte> d(1024);
  const cuda::stream s;
  CHECK_THROWS_AS(
      cuda::launch_roofline(dtype::f32, d.data(), d.data(), 12, {}, 0.5, 0.5, 256, 1, s.get()),
      std::invalid_argument);
  CHECK_THROWS_AS(
      cuda::launch_roofline(dtype::f32, d.data(), d.data(), 16, {2, 2}, 0.5, 0.5, 256, 1, s.get()),
      std::invalid_argument);
}

TEST_CASE("a roofline point runs, verifies and places itself under its roofs through the driver",
          "[roofline][sanitize]") {
  common_options opts = short_run_options();
  run_context ctx(opts);
  const auto bench = make_roofline_benchmark();
  const auto type = GENERATE(std::string("f32"), std::string("f16"));
  const nlohmann::json point{
      {"n", 1 << 20}, {"dtype", type}, {"intensity", 8.0}, {"block", 256}, {"device", 0}};
  INFO(point.dump());
  const auto r = run_point(bench, point, ctx);
  CHECK(r.status == result_status::ok);
  CHECK(r.verify.passed);
  const auto* m = r.find("kernel");
  REQUIRE(m != nullptr);
  CHECK(m->work.items == 8.0 * m->work.bytes);
  CHECK(r.derived.at("arithmetic_intensity") == 8.0);
  CHECK(r.derived.contains("theoretical_bytes_per_s"));
  if (r.derived.contains("fraction_of_roof") && r.derived.at("fraction_of_roof").is_number()) {
    CHECK(r.derived.at("fraction_of_roof").get<double>() > 0);
    CHECK(r.derived.at("fraction_of_roof").get<double>() < 1.05);
  }
}
