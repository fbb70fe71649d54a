// The L2 flushes of --l2-flush on the GPU: a kernel timed after either flush still computes the
// right answer, every GPU row records the flush it got, and the write flush's dirty lines cost the
// next kernel time that the read flush's clean lines do not (docs/methodology.md, "L2 flush").
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/engine/context.hpp"
#include "gpubench/engine/measure.hpp"
#include "gpubench/results/result.hpp"
#include "gpubench/vecadd/vecadd_bench.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

using namespace gpubench;

namespace {

/// The seed kernel over n random f32 elements, with a sampler that owns an L2 flusher.
struct seed_vecadd {
  std::size_t n;
  thread_pool pool;
  cuda::device_info info = cuda::query_device(0);
  std::vector<float> a, b, ref;
  cuda::device_buffer<float> da, db, dc;
  cuda::stream s;
  cuda::l2_flusher flusher{info.l2_bytes};
  gpu_sampler sampler{s.get(), &flusher};
  work_counts work;

  explicit seed_vecadd(std::size_t elements)
      : n(elements), a(n), b(n), ref(n), da(n), db(n),
        dc(n), work{12.0 * static_cast<double>(n), static_cast<double>(n), "elements"} {
    const auto seed = fresh_seed();
    fill_random(dtype::f32, a.data(), n, seed, 1, pool);
    fill_random(dtype::f32, b.data(), n, seed, 2, pool);
    vecadd_reference(dtype::f32, a.data(), b.data(), ref.data(), n, pool);
    GPUBENCH_CUDA_TRY(cudaMemcpy(da.data(), a.data(), n * 4, cudaMemcpyHostToDevice));
    GPUBENCH_CUDA_TRY(cudaMemcpy(db.data(), b.data(), n * 4, cudaMemcpyHostToDevice));
    GPUBENCH_CUDA_TRY(cudaMemset(dc.data(), 0xFF, n * 4)); // poison: NaN
    GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  }
  void launch(cudaStream_t st) {
    cuda::vecadd_launch cfg;
    cfg.kernel = cuda::vecadd_kernel::seed;
    cfg.type = dtype::f32;
    cuda::launch_vecadd(cfg, da.data(), db.data(), dc.data(), n, st);
  }
  /// Every element of c against the CPU reference.
  verification check() {
    std::vector<float> got(n);
    s.synchronize();
    GPUBENCH_CUDA_TRY(cudaMemcpy(got.data(), dc.data(), n * 4, cudaMemcpyDeviceToHost));
    return check_vecadd(dtype::f32, ref.data(), got.data(), n, pool);
  }
  measurement measure(const measure_options& o) {
    return sampler.run("kernel", o, work, [this](cudaStream_t st) { launch(st); });
  }
};

measure_options short_options() {
  measure_options o;
  o.warmup = 2;
  o.min_samples = 20;
  o.max_samples = 200;
  o.timeout = 1;
  return o;
}

} // namespace

TEST_CASE("--l2-flush write: a kernel right after the memset flush computes every element",
          "[gpu][l2_flush]") {
  // 10M elements (120 MB): more than the L2, so the kernel evicts the flush's dirty lines while
  // it runs and its own writes land beside their write-back.
  seed_vecadd v(10'000'003);
  v.flusher.flush_by_writing(v.s.get());
  v.launch(v.s.get());
  const auto once = v.check();
  CHECK(once.checked == v.n);
  CHECK(once.mismatches == 0);

  GPUBENCH_CUDA_TRY(cudaMemset(v.dc.data(), 0xFF, v.n * 4)); // poison again
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  auto o = short_options();
  o.l2_flush = l2_flush_mode::write;
  const auto m = v.measure(o);
  CHECK(m.l2_flush == l2_flush_mode::write);
  CHECK(m.cold);
  CHECK(m.invalid_samples == 0);
  CHECK(m.stats.count >= 20);
  const auto sampled = v.check();
  CHECK(sampled.mismatches == 0);
  CHECK(sampled.passed);

  // The read flush after write flushes: its buffer is still all zeros (the memset writes zeros),
  // and the kernel is still right.
  o.l2_flush = l2_flush_mode::read;
  const auto r = v.measure(o);
  CHECK(r.l2_flush == l2_flush_mode::read);
  CHECK(v.check().passed);
}

TEST_CASE("every GPU row records the flush it got: read by default, none with --warm",
          "[gpu][l2_flush]") {
  seed_vecadd v(1 << 20);
  auto o = short_options();
  const auto plain = v.measure(o);
  CHECK(plain.l2_flush == l2_flush_mode::read);
  CHECK(plain.cold);
  o.warm = true;
  const auto warm = v.measure(o);
  CHECK(warm.l2_flush == l2_flush_mode::none);
  CHECK_FALSE(warm.cold);
  o.warm = false;
  o.l2_flush = l2_flush_mode::none;
  const auto none = v.measure(o);
  CHECK(none.l2_flush == l2_flush_mode::none);
  CHECK_FALSE(none.cold);
  // Batch rows are never flushed between their launches.
  o.l2_flush = l2_flush_mode::write;
  o.batch_time = 0.001;
  const auto batch =
      v.sampler.run_batch("kernel (batch)", o, v.work, [&v](cudaStream_t st) { v.launch(st); });
  CHECK(batch.l2_flush == l2_flush_mode::none);
  CHECK(to_json(batch)["l2_flush"] == "none");
  CHECK(v.check().passed);
}

TEST_CASE("--l2-flush write: the dirty lines' write-back lands in the timed kernel",
          "[gpu][l2_flush]") {
  // 4Mi elements (48 MB of traffic, about an H200's L2): the kernel evicts nearly every line the
  // flush left, so after a write flush it also writes them back. After a read flush there is
  // nothing to write back. Both medians from the same buffers, alternating to share any drift.
  seed_vecadd v(std::size_t{1} << 22);
  auto o = short_options();
  o.min_samples = 100;
  o.max_noise = 0.005;
  std::vector<double> read;
  std::vector<double> write;
  for (int round = 0; round < 3; ++round) {
    o.l2_flush = l2_flush_mode::read;
    read.push_back(v.measure(o).stats.median);
    o.l2_flush = l2_flush_mode::write;
    write.push_back(v.measure(o).stats.median);
  }
  const double read_median = summarize(read).median;
  const double write_median = summarize(write).median;
  INFO("seed kernel at 4Mi f32: read flush " << read_median * 1e6 << " us, write flush "
                                             << write_median * 1e6 << " us");
  CHECK(write_median > read_median * 1.02);
  CHECK(v.check().passed);
}

TEST_CASE("the vecadd driver verifies and records --l2-flush write on every timed GPU row",
          "[gpu][l2_flush]") {
  common_options opts = short_run_options();
  opts.measure.l2_flush = l2_flush_mode::write;
  run_context ctx(opts);
  const auto bench = make_vecadd_benchmark();
  const auto kernel = GENERATE(std::string("seed"), std::string("vectorized"));
  const nlohmann::json point{{"n", 1000003},       {"dtype", "f32"}, {"kernel", kernel},
                             {"memory", "pinned"}, {"block", 256},   {"chunks", 8},
                             {"streams", 2},       {"device", 0}};
  INFO(point.dump());
  const auto r = run_point(bench, point, ctx);
  CHECK(r.status == result_status::ok);
  CHECK(r.verify.passed);
  for (const auto& m : r.measurements) {
    INFO(m.name);
    if (m.clock == clock_kind::host) {
      CHECK_FALSE(m.l2_flush.has_value());
      continue;
    }
    CHECK(m.l2_flush == l2_flush_mode::write);
    CHECK(to_json(m)["l2_flush"] == "write");
  }
}
