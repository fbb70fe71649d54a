// pipeline --scenario augment-train: stage A uploads a uint8 batch and augments it (the fused
// kernel), stage B average-pools the augmented batch and runs one training step of an MLP.
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/core/random.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/pipeline/pipeline_cpu.hpp"
#include "gpubench/pipeline/pipeline_stages.hpp"

namespace gpubench {

namespace {

class augment_train_stages final : public pipeline_stages {
public:
  augment_train_stages(const pipeline_config& cfg, std::uint64_t seed, thread_pool& pool)
      : cfg_(cfg), aug_cfg_(pipeline_augment_config(cfg.batch)),
        aug_shape_(make_augment_shape(aug_cfg_)), beside_shape_(aug_shape_) {
    beside_shape_.fused_strip = cfg.overlap_strip;
    const auto batch = static_cast<std::size_t>(cfg.batch);
    const auto depth = static_cast<std::size_t>(cfg.depth);
    const std::size_t image_bytes = batch * aug_shape_.channels * aug_shape_.input_pixels();
    d_images_ = cuda::device_buffer<std::uint8_t>(image_bytes);
    d_samples_ = cuda::device_buffer<augment_sample>(depth * batch);
    for (std::size_t k = 0; k < depth; ++k) {
      host_images_.emplace_back(image_bytes);
      fill_synthetic_images(host_images_.back().data(), aug_cfg_,
                            random_bits(seed, pipeline_streams::image, k), cfg.batch, pool);
      host_samples_.push_back(draw_augment_samples(aug_cfg_, seed, k, cfg.batch));
      cuda::copy_to_device(d_samples_.data() + k * batch, host_samples_.back().data(),
                           batch * sizeof(augment_sample));
    }
    const auto tshape = trainer_shape(cfg);
    d_pooled_ = cuda::device_buffer<float>(static_cast<std::size_t>(tshape.inputs()) * batch);
    const std::size_t target_n = depth * batch * cfg.trainer.outputs;
    const auto targets =
        pipeline_cpu::uniform_values(target_n, -1.0F, 1.0F, seed, pipeline_streams::target);
    d_targets_ = cuda::device_buffer<float>(target_n);
    cuda::copy_to_device(d_targets_.data(), targets.data(), target_n * sizeof(float));
    // cublasSgemm with separate kernels: on the H200 the fused cuBLASLt path made `graph` 5.7%
    // slower here (docs/pipeline.md, "Host time per step").
    trainer_ = std::make_unique<cuda::mlp>(tshape, cfg.batch, cuda::mlp_backend::cublas);
    initial_ = pipeline_cpu::initial_params(tshape, seed, pipeline_streams::trainer);
  }

  [[nodiscard]] bool augments() const override { return true; }

  /// Ring entry k's uint8 batch from its pinned host buffer into the device's input buffer
  /// (which the previous augment kernel on `s` has read).
  void upload(int k, cudaStream_t s) override {
    cuda::copy_to_device_async(d_images_.data(), host_images_[k].data(), d_images_.bytes(), s);
  }

  void compute_a(int k, float* slot, cuda::blas_handle& /*blas*/, cudaStream_t s,
                 bool beside_b) override {
    cuda::launch_augment_fused(beside_b ? beside_shape_ : aug_shape_, d_images_.data(),
                               d_samples_.data() + static_cast<std::size_t>(k) * cfg_.batch, slot,
                               s);
  }

  void stage_b(int k, const float* slot, cuda::blas_handle& blas, cudaStream_t s,
               cudaEvent_t narrow) override {
    cuda::launch_avg_pool(
        slot, cfg_.batch, aug_shape_.channels, aug_shape_.resize, cfg_.trainer.pool,
        1.0F / (static_cast<float>(cfg_.trainer.pool * cfg_.trainer.pool) * 255.0F),
        d_pooled_.data(), s);
    trainer_->train_step(blas, d_pooled_.data(),
                         d_targets_.data() +
                             static_cast<std::size_t>(k) * cfg_.batch * cfg_.trainer.outputs,
                         cfg_.lr, s, narrow);
  }

  void cpu_stage_a(int k, float* host_out, thread_pool& pool) override {
    // The fastest CPU path: OpenCV when built in (docs/augment.md), else the float reference.
    if (augment_opencv::built_in())
      augment_opencv::augment_batch(host_images_[k].data(), aug_shape_, host_samples_[k], host_out,
                                    pool);
    else
      augment_cpu::augment_batch(host_images_[k].data(), aug_shape_, host_samples_[k], host_out,
                                 pool);
  }

  [[nodiscard]] cuda::mlp& trained() override { return *trainer_; }
  [[nodiscard]] const std::vector<float>& initial_params() const override { return initial_; }

private:
  pipeline_config cfg_;
  augment_config aug_cfg_;
  augment_shape aug_shape_;
  augment_shape beside_shape_; ///< aug_shape_ with the strip for running beside stage B
  std::vector<cuda::pinned_buffer<std::uint8_t>> host_images_;
  std::vector<std::vector<augment_sample>> host_samples_;
  cuda::device_buffer<std::uint8_t> d_images_;
  cuda::device_buffer<augment_sample> d_samples_;
  cuda::device_buffer<float> d_pooled_;
  cuda::device_buffer<float> d_targets_;
  std::unique_ptr<cuda::mlp> trainer_;
  std::vector<float> initial_;
};

} // namespace

std::unique_ptr<pipeline_stages> make_augment_train_stages(const pipeline_config& cfg,
                                                           std::uint64_t seed, thread_pool& pool) {
  return std::make_unique<augment_train_stages>(cfg, seed, pool);
}

} // namespace gpubench
