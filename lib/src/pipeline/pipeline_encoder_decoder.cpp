// pipeline --scenario encoder-decoder: stage A is the forward pass of a frozen encoder, stage B
// one training step of a decoder that reconstructs the encoder's input from its features.
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/pipeline/pipeline_cpu.hpp"
#include "gpubench/pipeline/pipeline_stages.hpp"

namespace gpubench {

namespace {

class encoder_decoder_stages final : public pipeline_stages {
public:
  encoder_decoder_stages(const pipeline_config& cfg, std::uint64_t seed) : cfg_(cfg) {
    const std::size_t in_n =
        static_cast<std::size_t>(cfg.depth) * cfg.batch * cfg.coder.in_features;
    const auto inputs =
        pipeline_cpu::uniform_values(in_n, -1.0F, 1.0F, seed, pipeline_streams::input);
    d_inputs_ = cuda::device_buffer<float>(in_n);
    cuda::copy_to_device(d_inputs_.data(), inputs.data(), in_n * sizeof(float));
    const auto eshape = encoder_shape(cfg);
    encoder_ = std::make_unique<cuda::mlp>(eshape, cfg.batch);
    encoder_->set_params(
        pipeline_cpu::initial_params(eshape, seed, pipeline_streams::encoder).data());
    const auto dshape = decoder_shape(cfg);
    decoder_ = std::make_unique<cuda::mlp>(dshape, cfg.batch);
    initial_ = pipeline_cpu::initial_params(dshape, seed, pipeline_streams::decoder);
  }

  [[nodiscard]] bool augments() const override { return false; }
  void upload(int /*k*/, cudaStream_t /*s*/) override {}

  void compute_a(int k, float* slot, cuda::blas_handle& blas, cudaStream_t s,
                 bool /*beside_b*/) override {
    encoder_->forward(blas, input(k), s, slot);
  }

  void stage_b(int k, const float* slot, cuda::blas_handle& blas, cudaStream_t s,
               cudaEvent_t /*narrow*/) override {
    decoder_->train_step(blas, slot, input(k), cfg_.lr, s);
  }

  void cpu_stage_a(int /*k*/, float* /*host_out*/, thread_pool& /*pool*/) override {
    throw usage_error("pipeline: cpu-augment needs --scenario augment-train");
  }

  [[nodiscard]] cuda::mlp& trained() override { return *decoder_; }
  [[nodiscard]] const std::vector<float>& initial_params() const override { return initial_; }

private:
  [[nodiscard]] const float* input(int k) const {
    return d_inputs_.data() + static_cast<std::size_t>(k) * cfg_.batch * cfg_.coder.in_features;
  }

  pipeline_config cfg_;
  cuda::device_buffer<float> d_inputs_;
  std::unique_ptr<cuda::mlp> encoder_;
  std::unique_ptr<cuda::mlp> decoder_;
  std::vector<float> initial_;
};

} // namespace

std::unique_ptr<pipeline_stages> make_encoder_decoder_stages(const pipeline_config& cfg,
                                                             std::uint64_t seed) {
  return std::make_unique<encoder_decoder_stages>(cfg, seed);
}

std::unique_ptr<pipeline_stages> make_pipeline_stages(const pipeline_config& cfg,
                                                      std::uint64_t seed, thread_pool& pool) {
  if (cfg.scenario == pipeline_scenario::augment_train)
    return make_augment_train_stages(cfg, seed, pool);
  return make_encoder_decoder_stages(cfg, seed);
}

} // namespace gpubench
