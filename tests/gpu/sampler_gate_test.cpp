// The --concurrent start gate in every sampler (sampler_frame.hpp): events, batch, timestamps
// and energy each pass it once, after their untimed pre-run and before their first sample, and
// a run under --concurrent on one GPU records a GPU-clock start for every row it measures.
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/start_gate.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/scale/multi_gpu_concurrent.hpp"
#include "gpubench/vecadd/vecadd_bench.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace gpubench;

namespace {

/// A 1Mi f32 vecadd that counts its launches, a sampler, and a start gate for one GPU whose hook
/// records each arrival: the name, and how many launches the sampler had made by then.
struct gated_vecadd {
  static constexpr std::size_t n = std::size_t{1} << 20;
  cuda::device_info info = cuda::query_device(0);
  cuda::device_buffer<float> a{n}, b{n}, c{n};
  cuda::stream s;
  cuda::l2_flusher flusher{info.l2_bytes};
  gpu_sampler sampler{s.get(), &flusher};
  work_counts work{12.0 * n, double(n), "elements"};
  long launches = 0;
  std::function<void(cudaStream_t)> kernel = [this](cudaStream_t st) {
    ++launches;
    cuda::vecadd_launch cfg;
    cfg.type = dtype::f32;
    cuda::launch_vecadd(cfg, a.data(), b.data(), c.data(), n, st);
  };
  cuda::start_gate gate{1, 30.0};
  std::uint64_t generation = 0;
  struct arrival {
    std::string name;
    long launches_before = 0;
    bool on_gpu = false;
  };
  std::vector<arrival> arrivals;
  scoped_measurement_start_hook hook{[this](std::string_view name, cudaStream_t stream) {
    arrivals.push_back({std::string(name), launches, stream != nullptr});
    if (stream == nullptr) return;
    gate.wait_on(0, ++generation, stream);
    gate.release(generation); // one GPU: everyone has arrived
  }};

  gated_vecadd() {
    GPUBENCH_CUDA_TRY(cudaMemset(a.data(), 0, n * 4));
    GPUBENCH_CUDA_TRY(cudaMemset(b.data(), 0, n * 4));
    GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  }
  [[nodiscard]] static measure_options options() {
    measure_options o;
    o.warmup = 1;
    o.min_samples = 5;
    o.max_samples = 20;
    o.min_time = 0;
    o.timeout = 1;
    o.batch_time = 1e-3;
    return o;
  }
  /// The gate let the stream through when released (not at its timeout), for the last arrival.
  void check_gate_passed() {
    s.synchronize();
    const auto stamp = gate.read(0);
    CHECK(stamp.generation == generation);
    CHECK_FALSE(stamp.timed_out);
    CHECK(stamp.globaltimer_ns > 0);
  }
};

} // namespace

TEST_CASE("samplers: events pass the gate once, after the pre-run, before the samples",
          "[gpu][frame][multi_gpu]") {
  gated_vecadd v;
  const auto m = v.sampler.run("kernel", gated_vecadd::options(), v.work, v.kernel);
  REQUIRE(v.arrivals.size() == 1);
  CHECK(v.arrivals[0].name == "kernel");
  CHECK(v.arrivals[0].on_gpu);
  CHECK(v.arrivals[0].launches_before == 1); // the lazy-load pre-run only
  CHECK(v.launches - v.arrivals[0].launches_before >= static_cast<long>(m.samples.size()));
  CHECK(m.timing == gpu_timing::launch_free);
  v.check_gate_passed();
}

TEST_CASE("samplers: batch passes the gate once, after its calibration, before the samples",
          "[gpu][frame][multi_gpu]") {
  gated_vecadd v;
  const auto m = v.sampler.run_batch("kernel (batch)", gated_vecadd::options(), v.work, v.kernel);
  REQUIRE(v.arrivals.size() == 1);
  CHECK(v.arrivals[0].name == "kernel (batch)");
  CHECK(v.arrivals[0].launches_before >= 1 + 3 + 10); // pre-run, settle, calibration
  CHECK(v.launches - v.arrivals[0].launches_before >=
        static_cast<long>(m.samples.size()) * m.batch_launches);
  CHECK(m.batch_launch_free);
  v.check_gate_passed();
}

TEST_CASE("samplers: timestamps pass the gate once, before the samples",
          "[gpu][frame][multi_gpu]") {
  gated_vecadd v;
  std::string why;
  const auto m = v.sampler.run_timestamps("kernel (timestamps)", gated_vecadd::options(), v.work,
                                          v.kernel, why);
  if (!m) {
    CHECK(v.arrivals.empty()); // nothing measured, in every thread alike: no gate
    WARN("no CUPTI here: " << why);
    return;
  }
  REQUIRE(v.arrivals.size() == 1);
  CHECK(v.arrivals[0].name == "kernel (timestamps)");
  CHECK(v.arrivals[0].launches_before == 1);
  CHECK(v.launches - v.arrivals[0].launches_before >= static_cast<long>(m->samples.size()));
  v.check_gate_passed();
}

TEST_CASE("samplers: energy passes the gate once, measured or not, and lands on its row by name",
          "[gpu][frame][multi_gpu]") {
  gated_vecadd v;
  common_options opts;
  opts.energy = true;
  opts.measure = gated_vecadd::options();
  result r;
  r.measurements.push_back(v.sampler.run("kernel", opts.measure, v.work, v.kernel));
  r.measurements.push_back(v.sampler.run("other", opts.measure, v.work, v.kernel));
  // No telemetry source here: the energy is unsupported, and the gate is still passed.
  add_gpu_energy(r, "kernel", v.sampler, opts, v.kernel, double(gated_vecadd::n), "element");
  REQUIRE(v.arrivals.size() == 3);
  CHECK(v.arrivals[2].name == "kernel (energy)");
  CHECK(r.measurements[0].energy.value("supported", true) == false);
  CHECK(r.measurements[1].energy.empty()); // the last row is not the one measured
  add_gpu_energy(r, "missing", v.sampler, opts, v.kernel, 1.0, "element");
  CHECK(v.arrivals.size() == 3); // no row of that name: nothing measured, no gate
  v.check_gate_passed();
}

TEST_CASE("samplers: --concurrent on one GPU gates every row kind on the GPU clock",
          "[gpu][frame][multi_gpu]") {
  const benchmark b = make_vecadd_benchmark();
  common_options opts;
  opts.devices = {0};
  opts.verbosity = 0;
  opts.energy = true;
  opts.measure.warmup = 1;
  opts.measure.min_samples = 5;
  opts.measure.max_samples = 20;
  opts.measure.min_time = 0;
  opts.measure.timeout = 1;
  opts.measure.batch_time = 1e-3;
  // No --timestamps: the command line refuses it with --concurrent (CUPTI traces the whole
  // process); its gate is checked above.
  opts.measure.energy_window = 0.5;
  opts.measure.energy_windows = 2;
  const auto points = plan_points(b, {{"n", "1M"}, {"memory", "pinned"}}, opts);
  REQUIRE(points.size() == 1);
  concurrent_options copts;
  copts.barrier_timeout_s = 120;
  const auto rep = execute_concurrent(points, opts, {"gpubench", "vecadd"}, copts);
  REQUIRE(rep.results.size() == 1);
  const result& r = rep.results[0];
  CHECK(r.status == result_status::ok);
  REQUIRE(r.find("kernel") != nullptr);
  CHECK_FALSE(r.find("kernel")->energy.empty()); // measured, or unsupported and why
  REQUIRE(rep.aggregate["points"].size() == 1);
  std::vector<std::string> gated;
  for (const auto& a : rep.aggregate["points"][0]["measurements"])
    if (a.contains("start_skew_clock") && a["start_skew_clock"] == "gpu_globaltimer")
      gated.push_back(a["name"].get<std::string>());
  INFO("rows with a GPU-clock start: " << nlohmann::json(gated).dump());
  for (const auto& m : r.measurements) {
    if (m.clock != clock_kind::gpu) continue;
    CHECK(std::find(gated.begin(), gated.end(), m.name) != gated.end());
  }
  CHECK(r.find("kernel (batch)") != nullptr);
}
