// The pipeline's model on cuBLAS: matrix products in cublasSgemm, the element-wise parts (bias,
// ReLU, loss gradient, bias gradients, SGD, pooling) in small kernels. Every reduction is done by
// one thread in a fixed order, never with atomics, so that results do not depend on scheduling.
#include "gpubench/cuda/mlp.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpubench::cuda {

namespace {

void check_blas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  // fmt's compile-time format check does not compile under nvcc: build the message directly.
  const std::string what = std::string(call) + " failed: " + cublasGetStatusName(status) + " at " +
                           file + ":" + std::to_string(line);
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw out_of_memory_error(cudaErrorMemoryAllocation, what);
  throw cuda_error(cudaErrorUnknown, what);
}

#define GPUBENCH_BLAS_TRY(call) check_blas((call), #call, __FILE__, __LINE__)

constexpr int block = 256;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + block - 1) / block, 1, 65535U * 16U));
}

__global__ void bias_act_kernel(float* y, const float* bias, int out, int batch, bool relu) {
  const std::size_t n = static_cast<std::size_t>(out) * static_cast<std::size_t>(batch);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = y[i] + bias[i % static_cast<std::size_t>(out)];
    y[i] = relu ? fmaxf(v, 0.0F) : v;
  }
}

/// Samples a thread of the gradient kernels below loads before it uses any: their loads go out
/// together instead of one round trip to memory per sample (the kernels have one thread per
/// output, so at batch 32 a few thousand threads, and are bound by that latency).
constexpr int grad_chunk = 8;

/// The loop both gradient kernels share, for output `o`: in sample order, delta = grad(in, other)
/// written to `out` (which may be `in`: relu_grad works in place), and the bias gradient as the sum
/// of delta over the batch, by one thread in a fixed order. Each chunk's loads are issued before
/// any of its stores, so they go out together.
template <class Grad>
__device__ __forceinline__ void batch_gradient(const float* in, const float* __restrict__ other,
                                               float* out, int outputs, int batch, int o, Grad grad,
                                               float* __restrict__ bias_grad) {
  float sum = 0.0F;
  for (int b0 = 0; b0 < batch; b0 += grad_chunk) {
    float iv[grad_chunk];
    float ov[grad_chunk];
#pragma unroll
    for (int j = 0; j < grad_chunk; ++j) {
      const std::size_t i = static_cast<std::size_t>(b0 + j) * outputs + o;
      iv[j] = b0 + j < batch ? in[i] : 0.0F;
      ov[j] = b0 + j < batch ? other[i] : 0.0F;
    }
#pragma unroll
    for (int j = 0; j < grad_chunk; ++j) {
      if (b0 + j >= batch) break;
      const float d = grad(iv[j], ov[j]);
      out[static_cast<std::size_t>(b0 + j) * outputs + o] = d;
      sum = __fadd_rn(sum, d);
    }
  }
  bias_grad[o] = sum;
}

/// delta = (y - target) / batch for the linear output layer, and the bias gradient.
__global__ void mse_grad_kernel(const float* __restrict__ y, const float* __restrict__ target,
                                int out, int batch, float inv_batch, float* __restrict__ delta,
                                float* __restrict__ bias_grad) {
  const int o = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (o >= out) return;
  batch_gradient(
      y, target, delta, out, batch, o,
      [inv_batch](float yv, float tv) { return __fmul_rn(__fsub_rn(yv, tv), inv_batch); },
      bias_grad);
}

/// In place: delta *= (act > 0), and the bias gradient.
__global__ void relu_grad_kernel(float* delta, const float* __restrict__ act, int out, int batch,
                                 float* __restrict__ bias_grad) {
  const int o = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (o >= out) return;
  batch_gradient(
      delta, act, delta, out, batch, o, [](float d, float a) { return a > 0.0F ? d : 0.0F; },
      bias_grad);
}

__global__ void sgd_kernel(float* params, const float* grads, float lr, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    params[i] = __fsub_rn(params[i], __fmul_rn(lr, grads[i]));
}

__global__ void avg_pool_kernel(const float* images, int batch, int channels, int size, int pool,
                                float scale, float* features) {
  const int side = size / pool;
  const std::size_t per_sample = static_cast<std::size_t>(channels) * side * side;
  const std::size_t n = per_sample * static_cast<std::size_t>(batch);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const auto x = static_cast<int>(i % side);
    const auto y = static_cast<int>((i / side) % side);
    const std::size_t plane = i / (static_cast<std::size_t>(side) * side); // b * channels + c
    const float* src = images + plane * size * size + static_cast<std::size_t>(y) * pool * size +
                       static_cast<std::size_t>(x) * pool;
    float sum = 0.0F;
    for (int dy = 0; dy < pool; ++dy)
      for (int dx = 0; dx < pool; ++dx)
        sum = __fadd_rn(sum, src[static_cast<std::size_t>(dy) * size + dx]);
    features[i] = __fmul_rn(sum, scale);
  }
}

} // namespace

// ---- shape ----------------------------------------------------------------------------------

int mlp_shape::widest() const noexcept { return *std::max_element(sizes.begin(), sizes.end()); }

std::size_t mlp_shape::weight_offset(int layer) const noexcept {
  std::size_t off = 0;
  for (int l = 0; l < layer; ++l)
    off +=
        static_cast<std::size_t>(sizes[l]) * sizes[l + 1] + static_cast<std::size_t>(sizes[l + 1]);
  return off;
}

std::size_t mlp_shape::bias_offset(int layer) const noexcept {
  return weight_offset(layer) + static_cast<std::size_t>(sizes[layer]) * sizes[layer + 1];
}

std::size_t mlp_shape::param_count() const noexcept { return weight_offset(layers()); }

double mlp_shape::macs_per_sample() const noexcept {
  double m = 0;
  for (int l = 0; l < layers(); ++l) m += static_cast<double>(sizes[l]) * sizes[l + 1];
  return m;
}

double mlp_shape::forward_flops(int batch) const noexcept {
  return 2.0 * batch * macs_per_sample();
}

double mlp_shape::train_flops(int batch) const noexcept {
  const double first = static_cast<double>(sizes[0]) * sizes[1];
  return 2.0 * batch * (3.0 * macs_per_sample() - first);
}

double mlp_shape::forward_bytes(int batch) const noexcept {
  double acts = 0;
  for (const int s : sizes) acts += s;
  return 4.0 * (static_cast<double>(param_count()) + batch * acts);
}

double mlp_shape::train_bytes(int batch) const noexcept {
  const double p = static_cast<double>(param_count());
  double acts = 0;
  for (const int s : sizes) acts += s;
  // forward reads p, input gradients read p, gradients written p, SGD reads 2p and writes p;
  // activations and their gradients written and read once each.
  return 4.0 * (6.0 * p + 4.0 * batch * acts);
}

// ---- cuBLAS handle --------------------------------------------------------------------------

struct blas_handle::impl {
  cublasHandle_t handle = nullptr;
  device_buffer<std::byte> workspace{workspace_bytes};
  cudaStream_t bound = nullptr;
  bool ever_bound = false;
};

blas_handle::blas_handle() : impl_(std::make_unique<impl>()) {
  GPUBENCH_BLAS_TRY(cublasCreate(&impl_->handle));
  GPUBENCH_BLAS_TRY(cublasSetMathMode(impl_->handle, CUBLAS_DEFAULT_MATH));
  GPUBENCH_BLAS_TRY(cublasSetAtomicsMode(impl_->handle, CUBLAS_ATOMICS_NOT_ALLOWED));
  GPUBENCH_BLAS_TRY(cublasSetPointerMode(impl_->handle, CUBLAS_POINTER_MODE_HOST));
  bind(nullptr);
}

blas_handle::blas_handle(blas_handle&&) noexcept = default;
blas_handle& blas_handle::operator=(blas_handle&&) noexcept = default;

blas_handle::~blas_handle() {
  if (impl_ && impl_->handle != nullptr) (void)cublasDestroy(impl_->handle);
}

void blas_handle::bind(cudaStream_t s) {
  if (impl_->ever_bound && impl_->bound == s) return;
  GPUBENCH_BLAS_TRY(cublasSetStream(impl_->handle, s));
  GPUBENCH_BLAS_TRY(
      cublasSetWorkspace(impl_->handle, impl_->workspace.data(), impl_->workspace.bytes()));
  impl_->bound = s;
  impl_->ever_bound = true;
}

// ---- network --------------------------------------------------------------------------------

mlp::mlp(mlp_shape shape, int batch)
    : shape_(std::move(shape)), batch_(batch), params_(shape_.param_count()),
      grads_(shape_.param_count()) {
  if (shape_.layers() < 1) throw std::invalid_argument("mlp: at least one layer");
  for (int l = 0; l < shape_.layers(); ++l)
    acts_.emplace_back(static_cast<std::size_t>(shape_.sizes[l + 1]) * batch_);
  for (auto& d : delta_)
    d = device_buffer<float>(static_cast<std::size_t>(shape_.widest()) * batch_);
  GPUBENCH_CUDA_TRY(cudaMemset(grads_.data(), 0, grads_.bytes()));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
}

void mlp::set_params(const float* host) {
  GPUBENCH_CUDA_TRY(cudaMemcpy(params_.data(), host, params_.bytes(), cudaMemcpyHostToDevice));
  // A pageable copy may return before its DMA lands, and the legacy stream it ran on does not
  // order work on non-blocking streams: wait for it.
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
}

std::vector<float> mlp::get_params() const {
  std::vector<float> out(params_.size());
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  GPUBENCH_CUDA_TRY(
      cudaMemcpy(out.data(), params_.data(), params_.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

void mlp::forward(blas_handle& blas, const float* x, cudaStream_t s, float* out) {
  forward_layers(blas, x, s, out, nullptr);
}

void mlp::forward_layers(blas_handle& blas, const float* x, cudaStream_t s, float* out,
                         cudaEvent_t before_last) {
  blas.bind(s);
  const cublasHandle_t h = blas.impl_->handle;
  const float one = 1.0F;
  const float zero = 0.0F;
  const int layers = shape_.layers();
  for (int l = 0; l < layers; ++l) {
    const int in = shape_.sizes[l];
    const int o = shape_.sizes[l + 1];
    const float* src = l == 0 ? x : acts_[l - 1].data();
    float* dst = (l == layers - 1 && out != nullptr) ? out : acts_[l].data();
    const float* w = params_.data() + shape_.weight_offset(l);
    if (l == layers - 1 && before_last != nullptr)
      GPUBENCH_CUDA_TRY(cudaEventRecord(before_last, s));
    GPUBENCH_BLAS_TRY(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, o, batch_, in, &one, w, o, src, in,
                                  &zero, dst, o));
    const std::size_t n = static_cast<std::size_t>(o) * batch_;
    bias_act_kernel<<<blocks_for(n), block, 0, s>>>(dst, params_.data() + shape_.bias_offset(l), o,
                                                    batch_, l < layers - 1 || shape_.relu_last);
    GPUBENCH_CHECK_LAUNCH("bias_act_kernel");
  }
}

void mlp::train_step(blas_handle& blas, const float* x, const float* target, float lr,
                     cudaStream_t s, cudaEvent_t narrow) {
  if (shape_.relu_last) throw std::logic_error("mlp::train_step: the last layer must be linear");
  forward_layers(blas, x, s, nullptr, narrow);
  const cublasHandle_t h = blas.impl_->handle;
  const float one = 1.0F;
  const float zero = 0.0F;
  const int layers = shape_.layers();
  int cur = 0;
  {
    const int o = shape_.outputs();
    mse_grad_kernel<<<blocks_for(static_cast<std::size_t>(o)), block, 0, s>>>(
        acts_.back().data(), target, o, batch_, 1.0F / static_cast<float>(batch_),
        delta_[cur].data(), grads_.data() + shape_.bias_offset(layers - 1));
    GPUBENCH_CHECK_LAUNCH("mse_grad_kernel");
  }
  for (int l = layers - 1; l >= 0; --l) {
    const int in = shape_.sizes[l];
    const int o = shape_.sizes[l + 1];
    const float* src = l == 0 ? x : acts_[l - 1].data();
    // dW = delta (o x B) . src^T (B x in)
    GPUBENCH_BLAS_TRY(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, o, in, batch_, &one,
                                  delta_[cur].data(), o, src, in, &zero,
                                  grads_.data() + shape_.weight_offset(l), o));
    if (l == 0) break;
    // d(src) = W^T (in x o) . delta (o x B), then through the ReLU of layer l - 1.
    const int nxt = 1 - cur;
    GPUBENCH_BLAS_TRY(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, in, batch_, o, &one,
                                  params_.data() + shape_.weight_offset(l), o, delta_[cur].data(),
                                  o, &zero, delta_[nxt].data(), in));
    relu_grad_kernel<<<blocks_for(static_cast<std::size_t>(in)), block, 0, s>>>(
        delta_[nxt].data(), acts_[l - 1].data(), in, batch_,
        grads_.data() + shape_.bias_offset(l - 1));
    GPUBENCH_CHECK_LAUNCH("relu_grad_kernel");
    cur = nxt;
  }
  sgd_kernel<<<blocks_for(params_.size()), block, 0, s>>>(params_.data(), grads_.data(), lr,
                                                          params_.size());
  GPUBENCH_CHECK_LAUNCH("sgd_kernel");
}

void launch_avg_pool(const float* images, int batch, int channels, int size, int pool, float scale,
                     float* features, cudaStream_t s) {
  const int side = size / pool;
  const std::size_t n = static_cast<std::size_t>(batch) * channels * side * side;
  avg_pool_kernel<<<blocks_for(n), block, 0, s>>>(images, batch, channels, size, pool, scale,
                                                  features);
  GPUBENCH_CHECK_LAUNCH("avg_pool_kernel");
}

} // namespace gpubench::cuda
