// Determinism: the same seed gives the same augment output and the same trained pipeline weights,
// bit for bit on the same GPU; another seed gives other data.
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/pipeline/pipeline.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using namespace gpubench;

namespace {

std::vector<std::byte> fused_output(const augment_config& cfg, std::uint64_t seed,
                                    thread_pool& pool) {
  const augment_shape shape = make_augment_shape(cfg);
  const auto batch = static_cast<std::size_t>(cfg.batch);
  const std::size_t in_n = batch * cfg.channels * shape.input_pixels();
  std::vector<std::uint8_t> input(in_n);
  fill_synthetic_images(input.data(), cfg, seed, cfg.batch, pool);
  const auto samples = draw_augment_samples(cfg, seed, 1, cfg.batch);
  const std::size_t out_bytes = cuda::augment_output_bytes(shape);
  cuda::device_buffer<std::uint8_t> d_in(in_n);
  cuda::device_buffer<augment_sample> d_samples(batch);
  cuda::device_buffer<std::byte> d_out(out_bytes);
  GPUBENCH_CUDA_TRY(cudaMemcpy(d_in.data(), input.data(), in_n, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemcpy(d_samples.data(), samples.data(), batch * sizeof(augment_sample),
                               cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemset(d_out.data(), 0xFF, out_bytes));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize()); // legacy-stream work before the non-blocking stream
  const cuda::stream s;
  cuda::launch_augment_fused(shape, d_in.data(), d_samples.data(), d_out.data(), s.get());
  s.synchronize();
  std::vector<std::byte> out(out_bytes);
  GPUBENCH_CUDA_TRY(cudaMemcpy(out.data(), d_out.data(), out_bytes, cudaMemcpyDeviceToHost));
  return out;
}

std::vector<float> trained(std::uint64_t seed, pipeline_scenario scenario, thread_pool& pool) {
  pipeline_config cfg;
  cfg.scenario = scenario;
  cfg.batch = 4;
  cfg.steps = 4;
  cfg.trainer.hidden = 64;
  cfg.coder.enc_width = 64;
  cfg.coder.dec_width = 32;
  cfg.coder.in_features = 48;
  pipeline_engine engine(cfg, seed, pool);
  const cuda::stream s;
  engine.start(pipeline_mode::streams, s.get());
  engine.run(pipeline_mode::streams, 4, s.get());
  return engine.trained_weights();
}

} // namespace

TEST_CASE("augment: the same seed gives the same output bit for bit, another seed another",
          "[determinism][sanitize]") {
  thread_pool pool(2);
  augment_config cfg;
  cfg.batch = 3;
  cfg.height = 64;
  cfg.width = 72;
  cfg.crop = 40;
  cfg.resize = 64;
  const auto a = fused_output(cfg, 11, pool);
  const auto b = fused_output(cfg, 11, pool);
  const auto c = fused_output(cfg, 12, pool);
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);
  CHECK(std::memcmp(a.data(), c.data(), a.size()) != 0);
}

TEST_CASE("pipeline: the same seed trains the same weights bit for bit, another seed others",
          "[determinism][sanitize]") {
  thread_pool pool(2);
  const auto scenario =
      GENERATE(pipeline_scenario::augment_train, pipeline_scenario::encoder_decoder);
  const auto a = trained(21, scenario, pool);
  const auto b = trained(21, scenario, pool);
  const auto c = trained(22, scenario, pool);
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) != 0);
}
