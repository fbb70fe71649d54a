// Every vecadd kernel and dtype against the CPU reference on fresh random data, outputs poisoned
// first, at sizes around block and vector boundaries; then every phase through the driver.
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/vecadd/vecadd_bench.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace gpubench;

namespace {

/// Runs one launch over [offset, offset + n) of freshly filled buffers and checks every element.
verification run_and_check(cuda::vecadd_kernel k, dtype t, std::size_t n, std::size_t offset_a,
                           std::size_t offset_c, thread_pool& pool, int grid = 0) {
  const std::size_t size = dtype_size(t);
  const std::size_t total = n + 8;
  std::vector<std::byte> a(total * size), b(total * size), ref(n * size), got(n * size);
  const auto seed = fresh_seed();
  fill_random(t, a.data(), total, seed, 1, pool);
  fill_random(t, b.data(), total, seed, 2, pool);
  vecadd_reference(t, a.data() + offset_a * size, b.data() + offset_a * size, ref.data(), n, pool);

  cuda::device_buffer<std::byte> da(total * size), db(total * size), dc(total * size);
  const cuda::stream s;
  GPUBENCH_CUDA_TRY(cudaMemcpy(da.data(), a.data(), total * size, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemcpy(db.data(), b.data(), total * size, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemset(dc.data(), 0xFF, total * size)); // poison: NaN in every type
  // The copies and the memset above ran on the legacy stream, which does not order work on the
  // non-blocking stream `s`: wait for them before launching there.
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  const cuda::vecadd_launch cfg{k, t, 256, grid};
  cuda::launch_vecadd(cfg, da.data() + offset_a * size, db.data() + offset_a * size,
                      dc.data() + offset_c * size, n, s.get());
  s.synchronize();
  GPUBENCH_CUDA_TRY(
      cudaMemcpy(got.data(), dc.data() + offset_c * size, n * size, cudaMemcpyDeviceToHost));
  return check_vecadd(t, ref.data(), got.data(), n, pool);
}

} // namespace

TEST_CASE("every vecadd kernel matches the CPU reference at boundary sizes", "[vecadd][sanitize]") {
  thread_pool pool;
  const auto kernel = GENERATE(cuda::vecadd_kernel::seed, cuda::vecadd_kernel::vectorized);
  const auto type = GENERATE(dtype::f32, dtype::f64, dtype::f16, dtype::bf16);
  const auto n = GENERATE(as<std::size_t>{}, 1, 255, 256, 257, 4097, 100003);
  INFO("kernel " << cuda::vecadd_kernel_name(kernel) << " dtype " << dtype_name(type) << " n "
                 << n);
  const auto v = run_and_check(kernel, type, n, 0, 0, pool);
  CHECK(v.checked == n);
  CHECK(v.mismatches == 0);
  CHECK(v.passed);
}

TEST_CASE("vecadd at 10M elements matches the CPU reference", "[vecadd]") {
  thread_pool pool;
  const auto kernel = GENERATE(cuda::vecadd_kernel::seed, cuda::vecadd_kernel::vectorized);
  const auto type = GENERATE(dtype::f32, dtype::f64, dtype::f16, dtype::bf16);
  INFO("kernel " << cuda::vecadd_kernel_name(kernel) << " dtype " << dtype_name(type));
  const auto v = run_and_check(kernel, type, 10'000'000, 0, 0, pool);
  CHECK(v.passed);
}

TEST_CASE("vectorized vecadd handles unaligned starts and tails", "[vecadd][sanitize]") {
  thread_pool pool;
  const auto type = GENERATE(dtype::f32, dtype::f16, dtype::f64);
  // Same misalignment for all three pointers: head peeled, then vectors, then a scalar tail.
  CHECK(run_and_check(cuda::vecadd_kernel::vectorized, type, 100001, 1, 1, pool).passed);
  CHECK(run_and_check(cuda::vecadd_kernel::vectorized, type, 4099, 3, 3, pool).passed);
  // Different misalignment: the scalar grid-stride path.
  CHECK(run_and_check(cuda::vecadd_kernel::vectorized, type, 100001, 0, 1, pool).passed);
  CHECK(run_and_check(cuda::vecadd_kernel::vectorized, type, 100001, 0, 1, pool, 2).passed);
}

TEST_CASE("a corrupted GPU result is reported as a mismatch", "[vecadd]") {
  thread_pool pool;
  std::vector<float> a(1000, 1.0F), b(1000, 2.0F), ref(1000), got(1000);
  vecadd_reference(dtype::f32, a.data(), b.data(), ref.data(), 1000, pool);
  got = ref;
  got[777] = 3.0000002F;
  const auto v = check_vecadd(dtype::f32, ref.data(), got.data(), 1000, pool);
  CHECK_FALSE(v.passed);
  CHECK(v.mismatches == 1);
  CHECK(v.details["first_mismatch"]["index"] == 777);
}

TEST_CASE("every vecadd phase runs and verifies through the driver", "[vecadd][sanitize]") {
  common_options opts = short_run_options();
  run_context ctx(opts);
  const auto bench = make_vecadd_benchmark();
  const auto memory = GENERATE(std::string("pinned"), std::string("pageable"));
  const auto kernel = GENERATE(std::string("seed"), std::string("vectorized"));
  const auto n = GENERATE(as<std::size_t>{}, 1, 4097, 1000003);
  const nlohmann::json point{{"n", n},           {"dtype", "f32"}, {"kernel", kernel},
                             {"memory", memory}, {"block", 256},   {"chunks", 16},
                             {"streams", 4},     {"device", 0}};
  INFO(point.dump());
  const auto r = run_point(bench, point, ctx);
  CHECK(r.status == result_status::ok);
  CHECK(r.verify.performed);
  CHECK(r.verify.passed);
  CHECK(r.verify.checked == 3 * n);
  for (const char* name :
       {"kernel", "h2d", "d2h", "end_to_end", "end_to_end_overlapped", "cpu_reference"}) {
    const auto* m = r.find(name);
    REQUIRE(m != nullptr);
    CHECK(m->stats.count >= 2);
    CHECK(m->stats.min > 0);
  }
  CHECK(r.derived.contains("speedup_kernel_vs_cpu_reference"));
  CHECK(r.find("kernel")->rates.contains("fraction_of_theoretical_peak"));
}
