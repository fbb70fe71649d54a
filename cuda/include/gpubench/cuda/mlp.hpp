#pragma once
// The pipeline benchmark's model: fully connected float32 networks on cuBLAS, trained with plain
// SGD on a mean-squared-error loss, deterministic (fixed cuBLAS workspace, no atomics, reductions
// in a fixed order), plus the average pooling that turns an augmented image into features.
//
// Layout: a batch is a column-major matrix, one column of `features` floats per sample (an NCHW
// image flattened is such a column). Layer l maps sizes[l] inputs to sizes[l + 1] outputs with
// W_l (out x in, column-major) and b_l (out); the parameters of all layers lie in one contiguous
// array, W_0 b_0 W_1 b_1 ..., so that SGD is one pass and trained weights compare in one memcmp.
#include "gpubench/cuda/memory.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace gpubench::cuda {

struct mlp_shape {
  std::vector<int> sizes; ///< inputs, hidden..., outputs: layers = sizes.size() - 1
  bool relu_last = false; ///< ReLU after the last layer too (an encoder's features)

  [[nodiscard]] int layers() const noexcept { return static_cast<int>(sizes.size()) - 1; }
  [[nodiscard]] int inputs() const noexcept { return sizes.front(); }
  [[nodiscard]] int outputs() const noexcept { return sizes.back(); }
  [[nodiscard]] int widest() const noexcept;
  [[nodiscard]] std::size_t weight_offset(int layer) const noexcept;
  [[nodiscard]] std::size_t bias_offset(int layer) const noexcept;
  [[nodiscard]] std::size_t param_count() const noexcept;
  /// Multiply-adds of all layers' matrix products for one sample (sum of in x out).
  [[nodiscard]] double macs_per_sample() const noexcept;
  /// FLOPs counted as 2 per multiply-add of the matrix products (bias, ReLU, loss and SGD are
  /// element-wise and left out). Forward: 2 B sum(in out). Training step: forward, the weight
  /// gradients (2 B sum(in out)) and the input gradients of every layer but the first.
  [[nodiscard]] double forward_flops(int batch) const noexcept;
  [[nodiscard]] double train_flops(int batch) const noexcept;
  /// Least bytes one training step moves: parameters read by forward and by the input gradients,
  /// gradients written, SGD reading parameters and gradients and writing parameters, activations
  /// written and read once each.
  [[nodiscard]] double train_bytes(int batch) const noexcept;
  [[nodiscard]] double forward_bytes(int batch) const noexcept;
};

/// A cuBLAS handle with its own workspace, bound to one stream at a time. Default math (no TF32),
/// atomics not allowed, the same workspace size on every handle: the same call gives the same bits
/// on whichever handle and stream it runs, which the pipeline's bitwise check relies on.
class blas_handle {
public:
  static constexpr std::size_t workspace_bytes = std::size_t{32} << 20U;
  blas_handle();
  blas_handle(const blas_handle&) = delete;
  blas_handle& operator=(const blas_handle&) = delete;
  blas_handle(blas_handle&&) noexcept;
  blas_handle& operator=(blas_handle&&) noexcept;
  ~blas_handle();
  /// Sets the stream (and the workspace again: cublasSetStream resets it) when it changes.
  void bind(cudaStream_t s);
  struct impl;

private:
  std::unique_ptr<impl> impl_;
  friend class mlp;
};

/// One network at one batch size: parameters, gradients and every activation pre-allocated, so
/// forward and train_step allocate nothing and can be captured into a CUDA graph.
class mlp {
public:
  mlp(mlp_shape shape, int batch);
  [[nodiscard]] const mlp_shape& shape() const noexcept { return shape_; }
  [[nodiscard]] int batch() const noexcept { return batch_; }
  [[nodiscard]] float* params() noexcept { return params_.data(); }
  [[nodiscard]] const float* params() const noexcept { return params_.data(); }
  [[nodiscard]] std::size_t param_count() const noexcept { return params_.size(); }
  /// The last layer's output of the latest forward (outputs x batch), unless forward wrote `out`.
  [[nodiscard]] const float* output() const noexcept { return acts_.back().data(); }

  /// Copies host parameters in (param_count() floats), synchronously.
  void set_params(const float* host);
  /// Copies the parameters out, synchronously.
  [[nodiscard]] std::vector<float> get_params() const;

  /// y = f(x) for a batch x (inputs x batch). With `out` the last layer writes there instead of
  /// into output().
  void forward(blas_handle& blas, const float* x, cudaStream_t s, float* out = nullptr);
  /// One SGD step on loss = sum (y - target)^2 / (2 batch): forward, backward, update.
  /// `narrow`, when given, is recorded on `s` just before the output layer's forward product:
  /// from there to the hidden layers' weight gradients the step's kernels are sized by the few
  /// outputs and leave most SMs idle, the place where work on another stream costs it least.
  void train_step(blas_handle& blas, const float* x, const float* target, float lr, cudaStream_t s,
                  cudaEvent_t narrow = nullptr);

private:
  /// forward, recording `before_last` (when given) before the last layer's product.
  void forward_layers(blas_handle& blas, const float* x, cudaStream_t s, float* out,
                      cudaEvent_t before_last);

  mlp_shape shape_;
  int batch_;
  device_buffer<float> params_;
  device_buffer<float> grads_;
  std::vector<device_buffer<float>> acts_; ///< layer outputs, after the activation
  device_buffer<float> delta_[2];          ///< ping-pong gradients w.r.t. layer outputs
};

/// Average pooling of `images` (batch x channels x size x size, float) over pool x pool windows,
/// scaled by `scale`, into features (channels x size/pool x size/pool per sample, column-major).
void launch_avg_pool(const float* images, int batch, int channels, int size, int pool, float scale,
                     float* features, cudaStream_t s);

} // namespace gpubench::cuda
