// The pipeline on a GPU: the model on both backends against the CPU reference on small sizes, with
// the launches its plan says; every mode's trained weights bitwise equal to serial's for both
// scenarios, batch sizes 1 to 128 and depths 2 and 3, and encoder-decoder enqueued from one
// thread and from two; a corrupted copy reported as a mismatch;
// stage timings positive and the derived figures consistent with the measurements they come from.
#include "gpubench/cuda/mlp.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/pipeline/pipeline.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"
#include "gpubench/pipeline/pipeline_cpu.hpp"
#include "gpubench/registry/registry.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

using namespace gpubench;

namespace {

common_options fast_options() {
  common_options o;
  o.seed = fresh_seed();
  o.measure.warmup = 0;
  o.measure.min_samples = 2;
  o.measure.max_samples = 3;
  o.measure.min_time = 0;
  o.measure.timeout = 0.5;
  o.verbosity = 0;
  return o;
}

/// Plans `given` (small models unless overridden) and runs every point on device 0.
std::vector<result> run_pipeline(param_values given, const common_options& opts) {
  const benchmark* b = find_benchmark("pipeline");
  REQUIRE(b != nullptr);
  given.try_emplace("steps", "6");
  given.try_emplace("warmup-steps", "2");
  given.try_emplace("hidden", "256");
  given.try_emplace("enc-width", "256");
  given.try_emplace("dec-width", "128");
  // The corruption hook is a key of the point, not a parameter.
  std::string corrupt;
  if (const auto it = given.find(pipeline_corrupt_key); it != given.end()) {
    corrupt = it->second;
    given.erase(it);
  }
  run_context ctx(opts);
  std::vector<result> out;
  for (auto point : b->plan(with_defaults(*b, given), opts)) {
    point["device"] = 0;
    if (!corrupt.empty()) point[pipeline_corrupt_key] = corrupt;
    out.push_back(run_point(*b, point, ctx));
  }
  return out;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

double median_of(const result& r, const char* name) {
  const auto* m = r.find(name);
  REQUIRE(m != nullptr);
  return m->median();
}

} // namespace

TEST_CASE("the network matches the CPU reference on both backends: forward, backward and SGD",
          "[pipeline][model][sanitize]") {
  INFO("seed " << fresh_seed());
  const int batch = GENERATE(1, 4, 9);
  const auto backend = GENERATE(cuda::mlp_backend::cublaslt, cuda::mlp_backend::cublas);
  INFO("batch " << batch << (backend == cuda::mlp_backend::cublas ? " cuBLAS" : " cuBLASLt"));
  const cuda::mlp_shape shape{{7, 5, 6, 3}, false};
  const auto init = pipeline_cpu::initial_params(shape, fresh_seed(), 1);
  const auto x =
      pipeline_cpu::uniform_values(7 * static_cast<std::size_t>(batch), -1, 1, fresh_seed(), 2);
  const auto t =
      pipeline_cpu::uniform_values(3 * static_cast<std::size_t>(batch), -1, 1, fresh_seed(), 3);
  cuda::device_buffer<float> dx(x.size());
  cuda::device_buffer<float> dt(t.size());
  GPUBENCH_CUDA_TRY(cudaMemcpy(dx.data(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemcpy(dt.data(), t.data(), t.size() * 4, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize()); // the copies' legacy stream does not order `s`
  const cuda::stream s;
  cuda::blas_handle blas;
  cuda::mlp net(shape, batch, backend);
  net.set_params(init.data());

  net.forward(blas, dx.data(), s.get());
  // cuBLASLt on a GPU of compute capability 9.0 runs every epilogue the model asks for, even at
  // these odd sizes (4-byte aligned biases and products).
  INFO("fusion " << cuda::to_string(net.fusion()));
  CHECK(net.fusion() ==
        (backend == cuda::mlp_backend::cublaslt ? cuda::mlp_fusion::full : cuda::mlp_fusion::none));
  const auto plan = cuda::plan_launches(shape, net.fusion());
  CHECK(net.launches() == plan.forward_total());
  std::vector<float> y(3 * static_cast<std::size_t>(batch));
  s.synchronize();
  GPUBENCH_CUDA_TRY(cudaMemcpy(y.data(), net.output(), y.size() * 4, cudaMemcpyDeviceToHost));
  const auto y_ref = pipeline_cpu::forward(shape, to_double(init), to_double(x), batch);
  CHECK(pipeline_cpu::compare_close(y_ref, y, 1e-5, 1e-5).passed);

  auto p_ref = to_double(init);
  const float lr = 0.05F;
  for (int step = 0; step < 3; ++step) {
    net.train_step(blas, dx.data(), dt.data(), lr, s.get());
    pipeline_cpu::train_step(shape, p_ref, to_double(x), to_double(t), lr, batch);
  }
  CHECK(net.launches() == plan.forward_total() + 3LL * plan.train_total());
  const auto p = net.get_params();
  const auto v = pipeline_cpu::compare_close(p_ref, p, 1e-4, 1e-5);
  INFO(v.details.dump());
  CHECK(v.passed);
  CHECK(pipeline_cpu::compare_bitwise(init, p).mismatches > 0); // it did train
}

TEST_CASE("a ReLU-last encoder and the average pooling match the CPU reference",
          "[pipeline][model]") {
  INFO("seed " << fresh_seed());
  const int batch = 5;
  const cuda::mlp_shape shape{{6, 8, 4}, true};
  const auto init = pipeline_cpu::initial_params(shape, fresh_seed(), 7);
  const auto x = pipeline_cpu::uniform_values(6 * batch, -1, 1, fresh_seed(), 8);
  cuda::device_buffer<float> dx(x.size());
  cuda::device_buffer<float> out(4 * batch);
  GPUBENCH_CUDA_TRY(cudaMemcpy(dx.data(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize()); // the copies' legacy stream does not order `s`
  const cuda::stream s;
  cuda::blas_handle blas;
  cuda::mlp net(shape, batch);
  net.set_params(init.data());
  net.forward(blas, dx.data(), s.get(), out.data());
  CHECK(net.fusion() != cuda::mlp_fusion::none);
  CHECK(net.launches() == cuda::plan_launches(shape, net.fusion()).forward_total());
  std::vector<float> y(4 * batch);
  s.synchronize();
  GPUBENCH_CUDA_TRY(cudaMemcpy(y.data(), out.data(), y.size() * 4, cudaMemcpyDeviceToHost));
  const auto y_ref = pipeline_cpu::forward(shape, to_double(init), to_double(x), batch);
  CHECK(pipeline_cpu::compare_close(y_ref, y, 1e-5, 1e-5).passed);
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v >= 0; }));

  const int channels = 3;
  const int size = 16;
  const int pool = 4;
  const auto images = pipeline_cpu::uniform_values(
      static_cast<std::size_t>(2 * channels * size * size), 0, 255, fresh_seed(), 9);
  cuda::device_buffer<float> dimg(images.size());
  cuda::device_buffer<float> feat(2 * channels * 16);
  GPUBENCH_CUDA_TRY(
      cudaMemcpy(dimg.data(), images.data(), images.size() * 4, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  cuda::launch_avg_pool(dimg.data(), 2, channels, size, pool, 1.0F / 16, feat.data(), s.get());
  std::vector<float> f(feat.size());
  s.synchronize();
  GPUBENCH_CUDA_TRY(cudaMemcpy(f.data(), feat.data(), f.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(pipeline_cpu::compare_close(
            pipeline_cpu::avg_pool(images, 2, channels, size, pool, 1.0 / 16), f, 1e-5, 1e-4)
            .passed);
}

TEST_CASE("every mode's trained weights are bitwise equal to serial's", "[pipeline][modes]") {
  INFO("seed " << fresh_seed());
  const auto scenario = GENERATE(as<std::string>{}, "augment-train", "encoder-decoder");
  const auto batch = GENERATE(as<std::string>{}, "1", "8", "32", "128");
  const auto depth = GENERATE(as<std::string>{}, "2", "3");
  INFO(scenario << " batch " << batch << " depth " << depth);
  // cpu-augment (CPU threads augmenting) only at the small batches, to keep the test short.
  const std::string modes = scenario == "augment-train" && (batch == "1" || batch == "8")
                                ? "all"
                                : "serial,streams,graph";
  const auto results =
      run_pipeline({{"scenario", scenario}, {"batch", batch}, {"depth", depth}, {"mode", modes}},
                   fast_options());
  REQUIRE(results.size() == 1);
  const result& r = results[0];
  INFO(r.reason << "\n" << r.verify.details.dump(1));
  CHECK(r.status == result_status::ok);
  REQUIRE(r.verify.performed);
  CHECK(r.verify.passed);
  // Every mode's trained weights are bitwise equal to serial's. (cpu-augment's batch check may
  // count elements past one uint8 level and still pass: OpenCV's uint8 stage A has a tolerance,
  // docs/augment.md.)
  for (const auto& [name, check] : r.verify.details.items())
    if (name.ends_with("vs serial")) CHECK(check.value("mismatches", -1) == 0);
  CHECK(r.verify.details.contains("streams vs serial"));
  CHECK(r.verify.details.contains("graph vs serial"));
  if (modes == "all") {
    CHECK(r.verify.details.contains("cpu-augment vs serial on the CPU-augmented batches"));
    CHECK(r.verify.details.contains("cpu-augment batch vs GPU augment"));
  }
}

TEST_CASE("a corrupted copy of one mode's weights is reported as a mismatch",
          "[pipeline][verify]") {
  INFO("seed " << fresh_seed());
  const auto results = run_pipeline({{"scenario", "encoder-decoder"},
                                     {"batch", "8"},
                                     {"mode", "serial,streams,graph"},
                                     {pipeline_corrupt_key, "graph"}},
                                    fast_options());
  REQUIRE(results.size() == 1);
  const result& r = results[0];
  CHECK(r.status == result_status::failed);
  CHECK_FALSE(r.verify.passed);
  CHECK(r.verify.mismatches == 1);
  CHECK(r.verify.details.at("streams vs serial").at("passed") == true);
  CHECK(r.verify.details.at("graph vs serial").at("passed") == false);
  CHECK(r.verify.details.at("graph vs serial").at("mismatches") == 1);
}

TEST_CASE("the pipeline trains: weights after the verified steps differ from the initial ones",
          "[pipeline][modes]") {
  pipeline_config cfg;
  cfg.scenario = pipeline_scenario::encoder_decoder;
  cfg.batch = 8;
  cfg.steps = 4;
  cfg.coder.enc_width = 64;
  cfg.coder.dec_width = 32;
  cfg.coder.in_features = 48;
  thread_pool pool(2);
  pipeline_engine engine(cfg, fresh_seed(), pool);
  const cuda::stream s;
  const auto before = engine.trained_weights();
  engine.start(pipeline_mode::streams, s.get());
  engine.run(pipeline_mode::streams, 4, s.get());
  const auto after = engine.trained_weights();
  CHECK(engine.step() == 4);
  CHECK(pipeline_cpu::compare_bitwise(before, after).mismatches > after.size() / 2);
  CHECK(std::all_of(after.begin(), after.end(), [](float v) { return std::isfinite(v); }));
}

TEST_CASE("encoder-decoder streams enqueued from two threads and from one give the same weights",
          "[pipeline][modes]") {
  pipeline_config cfg;
  cfg.scenario = pipeline_scenario::encoder_decoder;
  cfg.batch = 8;
  cfg.steps = 7;
  cfg.depth = GENERATE(2, 3);
  cfg.coder.enc_width = 64;
  cfg.coder.dec_width = 32;
  cfg.coder.in_features = 48;
  const auto seed = fresh_seed();
  thread_pool pool(2);
  const cuda::stream s;
  const auto train = [&](bool one_thread) {
    const environment_override threads(
        [one_thread](environment& e) { e.pipeline_one_thread = one_thread; });
    pipeline_engine engine(cfg, seed, pool); // reads the switch when it is built
    engine.start(pipeline_mode::streams, s.get());
    engine.run(pipeline_mode::streams, 3, s.get());
    engine.run(pipeline_mode::streams, 4, s.get());
    return engine.trained_weights();
  };
  const auto two = train(false);
  const auto one = train(true);
  INFO("depth " << cfg.depth);
  CHECK(pipeline_cpu::compare_bitwise(one, two).mismatches == 0);
}

TEST_CASE("stage timings are positive and the derived figures follow from them",
          "[pipeline][derived]") {
  INFO("seed " << fresh_seed());
  const auto scenario = GENERATE(as<std::string>{}, "augment-train", "encoder-decoder");
  const auto results =
      run_pipeline({{"scenario", scenario}, {"batch", "16"}, {"mode", "all"}}, fast_options());
  REQUIRE(results.size() == 1);
  const result& r = results[0];
  const auto& d = r.derived;
  const double ta = median_of(r, "stage_a");
  const double tb = median_of(r, "stage_b");
  const double ts = median_of(r, "serial");
  CHECK(ta > 0);
  CHECK(tb > 0);
  CHECK(ts > 0);
  CHECK(d.at("ideal_speedup").get<double>() == Approx((ta + tb) / std::max(ta, tb)));
  CHECK(d.at("ideal_speedup").get<double>() >= 1.0);
  CHECK(d.at("ideal_speedup").get<double>() <= 2.0);
  CHECK(d.at("serial_steps_per_s").get<double>() == Approx(1.0 / ts));
  CHECK(d.at("serial_images_per_s").get<double>() == Approx(16.0 / ts));
  CHECK(d.at("stage_b_flops_per_step").get<double>() > 0);
  // Each row declares its step's FLOPs, so it has a FLOP rate and a place on the roofline.
  const double fb = d.at("stage_b_flops_per_step").get<double>();
  CHECK(r.find("stage_b")->work.flops == Approx(fb));
  CHECK(r.find("stage_b")->rates.at("flops_per_s").get<double>() == Approx(fb / tb));
  CHECK(r.find("serial")->work.flops >= fb);
  CHECK(r.find("stage_b")->work.flops_per_clock_per_sm > 0);
  for (const char* m : {"streams", "graph"}) {
    INFO(m);
    const double t = median_of(r, m);
    CHECK(t > 0);
    CHECK(d.at(std::string(m) + "_speedup_vs_serial").get<double>() == Approx(ts / t));
    CHECK(d.at(std::string(m) + "_host_seconds_per_step").get<double>() > 0);
    const auto eff = d.find(std::string(m) + "_overlap_efficiency");
    if (ts > std::max(ta, tb)) {
      REQUIRE(eff != d.end());
      CHECK(eff->get<double>() == Approx((ts - t) / (ts - std::max(ta, tb))));
    }
    // every sample is seconds per step of a --steps-step run
    const auto* meas = r.find(m);
    CHECK(meas->work.item_unit == "steps");
    CHECK(meas->rates.at("items_per_s").get<double>() == Approx(1.0 / t));
  }
  if (scenario == "augment-train") {
    CHECK(median_of(r, "stage_a_cpu") > 0);
    CHECK(median_of(r, "cpu_augment") > 0);
    CHECK(d.contains("cpu_augment_speedup_vs_serial"));
  } else {
    CHECK(r.find("cpu_augment") == nullptr);
    CHECK(d.at("stage_a_flops_per_step").get<double>() > 0);
  }
}

TEST_CASE("the pipelined modes agree at a size small enough for compute-sanitizer",
          "[pipeline][sanitize]") {
  INFO("seed " << fresh_seed());
  const auto scenario = GENERATE(as<std::string>{}, "augment-train", "encoder-decoder");
  const auto results = run_pipeline({{"scenario", scenario},
                                     {"batch", "2"},
                                     {"depth", "2"},
                                     {"steps", "4"},
                                     {"warmup-steps", "1"},
                                     {"hidden", "64"},
                                     {"enc-width", "64"},
                                     {"dec-width", "64"},
                                     {"mode", "serial,streams,graph"}},
                                    fast_options());
  REQUIRE(results.size() == 1);
  INFO(results[0].reason);
  CHECK(results[0].status == result_status::ok);
  CHECK(results[0].verify.passed);
}
