#pragma once
// The pipeline benchmark's model: fully connected float32 networks on cuBLASLt, trained with
// plain SGD on a mean-squared-error loss, deterministic (float32 compute, no TF32, one algorithm
// per matrix product chosen once and reused, no atomics, reductions in a fixed order), plus the
// average pooling that turns an augmented image into features.
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

/// How much of a layer's element-wise work rides in its matrix products' cuBLASLt epilogues.
/// none: every product is a plain one, bias + ReLU, the ReLU gradient and the bias gradients are
/// kernels of their own. bias_act: the forward product adds the bias and applies the ReLU
/// (epilogue BIAS, RELU_BIAS). full: in addition the forward product stores the ReLU mask
/// (RELU_AUX_BIAS) and the input-gradient product applies the ReLU gradient and sums the bias
/// gradient (DRELU_BGRAD). A network uses the most the cuBLASLt at hand supports for all of its
/// layers (mlp::fusion()); whichever it is, every mode runs the same products with the same
/// algorithms, so the modes' weights stay bitwise equal.
enum class mlp_fusion { none, bias_act, full };

/// The library a network's products run on. cublaslt: cublasLtMatmul with the epilogues above.
/// cublas: cublasSgemm (default math, atomics not allowed) with the bias, ReLU, ReLU gradient and
/// bias gradients in kernels, the launches of mlp_fusion::none. Each scenario uses the one
/// measured best for it (docs/pipeline.md).
enum class mlp_backend { cublaslt, cublas };

/// Launches (matrix products and kernels) one layer issues.
struct mlp_layer_launches {
  int forward = 0;  ///< the forward product, and the bias + activation kernel without fusion
  int backward = 0; ///< weight gradient; input gradient and ReLU gradient for all but layer 0
};

/// The launches of one forward pass and of one training step, by layer, and the two per step that
/// belong to no layer: the loss gradient (which also sums the output layer's bias gradient) and
/// the SGD update (one kernel over the contiguous parameters).
struct mlp_launch_plan {
  std::vector<mlp_layer_launches> layers;
  int loss = 1;
  int update = 1;
  [[nodiscard]] int forward_total() const noexcept;
  [[nodiscard]] int train_total() const noexcept;
};

/// What mlp issues for `shape` at `fusion` (the unit tests check it against the design, the GPU
/// tests check the network's launch counter against it).
[[nodiscard]] mlp_launch_plan plan_launches(const mlp_shape& shape, mlp_fusion fusion);
[[nodiscard]] const char* to_string(mlp_fusion fusion) noexcept;

/// A cuBLASLt handle with its own workspace, used on one stream at a time (and, created when a
/// network on mlp_backend::cublas first uses it, a cuBLAS handle on the same workspace, default
/// math, atomics not allowed). The same workspace
/// size on every handle, and the algorithms are the network's (chosen once per product and
/// alignment), not the handle's: the same call gives the same bits on whichever handle and stream
/// it runs, which the pipeline's bitwise check relies on.
class blas_handle {
public:
  static constexpr std::size_t workspace_bytes = std::size_t{32} << 20U;
  blas_handle();
  blas_handle(const blas_handle&) = delete;
  blas_handle& operator=(const blas_handle&) = delete;
  blas_handle(blas_handle&&) noexcept;
  blas_handle& operator=(blas_handle&&) noexcept;
  ~blas_handle();
  /// The stream the next products run on (cuBLASLt takes it with each call).
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
  mlp(mlp_shape shape, int batch, mlp_backend backend = mlp_backend::cublaslt);
  mlp(const mlp&) = delete;
  mlp& operator=(const mlp&) = delete;
  ~mlp();
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

  [[nodiscard]] mlp_backend backend() const noexcept { return backend_; }
  /// The fusion the network settled on at its first product (mlp_fusion::none before that, and
  /// always with mlp_backend::cublas).
  [[nodiscard]] mlp_fusion fusion() const noexcept;
  /// Launches (products and kernels) issued so far.
  [[nodiscard]] long long launches() const noexcept { return launches_; }

  struct lt_state;

private:
  /// forward, recording `before_last` (when given) before the last layer's product.
  void forward_layers(blas_handle& blas, const float* x, cudaStream_t s, float* out,
                      cudaEvent_t before_last);

  /// Chooses the fusion and builds the products' descriptors (once, at the first product).
  lt_state& lt(blas_handle& blas);
  /// The bias + activation kernel, the ReLU-gradient kernel: only where the epilogue does not.
  void bias_act(int layer, float* y, cudaStream_t s);

  /// forward_layers on cublasSgemm (mlp_backend::cublas).
  void forward_sgemm(blas_handle& blas, const float* x, cudaStream_t s, float* out,
                     cudaEvent_t before_last);
  /// train_step's backward pass and SGD step, after the forward pass: the loss gradient, per layer
  /// from the last `weight_grad(l, delta, src, dw)` and (but for the first) `input_grad(l, delta,
  /// next_delta)` and the ReLU gradient (unless the products' epilogue applies it), then the step.
  template <typename WeightGrad, typename InputGrad>
  void backward(const float* x, const float* target, float lr, cudaStream_t s, bool relu_fused,
                WeightGrad weight_grad, InputGrad input_grad);

  mlp_shape shape_;
  int batch_;
  mlp_backend backend_;
  long long launches_ = 0;
  std::unique_ptr<lt_state> lt_;
  device_buffer<float> params_;
  device_buffer<float> grads_;
  std::vector<device_buffer<float>> acts_;          ///< layer outputs, after the activation
  std::vector<device_buffer<std::byte>> relu_mask_; ///< full fusion: the ReLU bit masks
  device_buffer<float> delta_[2];                   ///< ping-pong gradients w.r.t. layer outputs
};

/// Average pooling of `images` (batch x channels x size x size, float) over pool x pool windows,
/// scaled by `scale`, into features (channels x size/pool x size/pool per sample, column-major).
void launch_avg_pool(const float* images, int batch, int channels, int size, int pool, float scale,
                     float* features, cudaStream_t s);

} // namespace gpubench::cuda
