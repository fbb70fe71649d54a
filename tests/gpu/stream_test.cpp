// Every stream kernel against the CPU reference on fresh random data, outputs poisoned first, at
// sizes with and without a scalar tail and with grids smaller than the work; then the driver.
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/stream_kernels.hpp"
#include "gpubench/stream/stream_bench.hpp"
#include "gpubench/stream/stream_cpu.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace gpubench;
using cuda::stream_op;

namespace {

/// Runs BabelStream's sequence on the GPU and the CPU in step and checks every kernel's output.
void run_sequence(dtype t, std::size_t n, int block, int grid, thread_pool& pool) {
  const std::size_t bytes = n * dtype_size(t);
  std::vector<std::byte> a(bytes), b(bytes), c(bytes), got(bytes);
  const auto seed = fresh_seed();
  fill_random(t, a.data(), n, seed, 1, pool);
  fill_random(t, b.data(), n, seed, 2, pool);
  fill_random(t, c.data(), n, seed, 3, pool);
  cuda::device_buffer<std::byte> da(bytes), db(bytes), dc(bytes);
  cuda::device_buffer<std::byte> ws(cuda::stream_dot_workspace_bytes(grid));
  GPUBENCH_CUDA_TRY(cudaMemcpy(da.data(), a.data(), bytes, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemcpy(db.data(), b.data(), bytes, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemcpy(dc.data(), c.data(), bytes, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemset(ws.data(), 0, cuda::stream_dot_workspace_bytes(grid)));
  const cuda::stream_arrays arrays{da.data(), db.data(), dc.data(), ws.data()};
  const cuda::stream_launch cfg{t, block, grid};
  std::byte* host[] = {a.data(), b.data(), c.data()};
  std::byte* dev[] = {da.data(), db.data(), dc.data()};
  for (const auto op : cuda::all_stream_ops) {
    INFO("kernel " << cuda::stream_op_name(op));
    // Twice: dot must leave its workspace ready for the next launch.
    for (int repeat = 0; repeat < 2; ++repeat) {
      const int out = cuda::stream_op_output(op);
      void* poisoned = out >= 0 ? static_cast<void*>(dev[out]) : cuda::stream_dot_result(ws.data());
      GPUBENCH_CUDA_TRY(cudaMemset(poisoned, 0xFF, out >= 0 ? bytes : sizeof(double)));
      GPUBENCH_CUDA_TRY(cudaDeviceSynchronize()); // legacy-stream memset before `s`
      const cuda::stream s;
      cuda::launch_stream(op, cfg, arrays, n, s.get());
      s.synchronize();
      if (op == stream_op::dot) {
        double value = 0;
        GPUBENCH_CUDA_TRY(cudaMemcpy(&value, cuda::stream_dot_result(ws.data()), sizeof(double),
                                     cudaMemcpyDeviceToHost));
        const auto expected = stream_reference(op, t, host[0], host[1], host[2], n, pool);
        const auto v = check_stream_dot(n, expected, value);
        INFO("expected " << expected.sum << " got " << value << " tolerance " << v.tolerance);
        CHECK(v.passed);
        continue;
      }
      GPUBENCH_CUDA_TRY(cudaMemcpy(got.data(), dev[out], bytes, cudaMemcpyDeviceToHost));
      stream_reference(op, t, host[0], host[1], host[2], n, pool);
      const auto v = check_stream_array(t, host[out], got.data(), n, pool);
      CHECK(v.checked == n);
      CHECK(v.mismatches == 0);
    }
  }
}

} // namespace

TEST_CASE("every stream kernel matches the CPU reference at boundary sizes", "[stream][sanitize]") {
  thread_pool pool;
  const auto type = GENERATE(dtype::f32, dtype::f64);
  const auto n = GENERATE(as<std::size_t>{}, 1, 3, 4, 5, 255, 257, 4097, 100003, 1000001);
  const auto grid = GENERATE(1, 7, 1024);
  INFO("dtype " << dtype_name(type) << " n " << n << " grid " << grid);
  run_sequence(type, n, 256, grid, pool);
}

TEST_CASE("stream kernels on a device-sized grid match the CPU reference at 2^24 + 3", "[stream]") {
  thread_pool pool;
  const auto type = GENERATE(dtype::f32, dtype::f64);
  const auto block = GENERATE(128, 1024);
  const auto op = GENERATE(stream_op::triad, stream_op::dot);
  INFO("dtype " << dtype_name(type) << " block " << block);
  run_sequence(type, (std::size_t{1} << 24U) + 3, block,
               cuda::stream_default_grid(0, op, type, block), pool);
}

TEST_CASE("stream launchers refuse what the kernels cannot do", "[stream]") {
  cuda::device_buffer<std::byte> d(64);
  const cuda::stream_arrays ok{d.data(), d.data(), d.data(), nullptr};
  const cuda::stream_arrays skewed{d.data() + 4, d.data(), d.data(), nullptr};
  const cuda::stream s;
  CHECK_THROWS_AS(cuda::launch_stream(stream_op::copy, {dtype::f16, 256, 1}, ok, 4, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::launch_stream(stream_op::copy, {dtype::f32, 100, 1}, ok, 4, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::launch_stream(stream_op::copy, {dtype::f32, 256, 1}, skewed, 4, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::launch_stream(stream_op::dot, {dtype::f32, 256, 1}, ok, 4, s.get()),
                  std::invalid_argument);
}

TEST_CASE("every stream kernel runs and verifies through the driver", "[stream][sanitize]") {
  common_options opts = short_run_options();
  run_context ctx(opts);
  const auto bench = make_stream_benchmark();
  const auto type = GENERATE(std::string("f32"), std::string("f64"));
  const auto n = GENERATE(as<std::size_t>{}, 1, 4097, 1000003);
  const nlohmann::json point{
      {"n", n}, {"dtype", type}, {"block", 256}, {"grid", "device"}, {"device", 0}};
  INFO(point.dump());
  const auto r = run_point(bench, point, ctx);
  CHECK(r.status == result_status::ok);
  CHECK(r.verify.performed);
  CHECK(r.verify.passed);
  CHECK(r.verify.checked == 4 * n + 1);
  for (const char* name : {"copy", "mul", "add", "triad", "dot", "cpu_copy", "cpu_mul", "cpu_add",
                           "cpu_triad", "cpu_dot"}) {
    const auto* m = r.find(name);
    REQUIRE(m != nullptr);
    CHECK(m->stats.count >= 2);
    CHECK(m->stats.min > 0);
  }
  CHECK(r.find("triad")->work.bytes == 3.0 * static_cast<double>(n * (type == "f32" ? 4 : 8)));
  CHECK(r.find("dot")->rates.contains("fraction_of_theoretical_peak"));
  CHECK(r.derived.contains("speedup_triad_vs_cpu_reference"));
}
