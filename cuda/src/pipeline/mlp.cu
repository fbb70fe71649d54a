// The pipeline's model on cuBLASLt: the matrix products in cublasLtMatmul, float32 compute (no
// TF32), with the bias, the ReLU, the ReLU gradient and the bias gradients in the products'
// epilogues where the library supports them for every layer (mlp_fusion), in small kernels where
// not; the loss gradient, the SGD update and the pooling are kernels. Each product's descriptors
// and layouts are built once, its algorithm chosen once (per alignment of its pointers) and
// reused. Every reduction of the kernels is done by one thread in a fixed order, never with
// atomics, so that results do not depend on scheduling.
#include "gpubench/cuda/mlp.hpp"

#include "core/blas_check.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpubench::cuda {

namespace {

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

// ---- cuBLASLt handle ------------------------------------------------------------------------

struct blas_handle::impl {
  cublasLtHandle_t handle = nullptr;
  device_buffer<std::byte> workspace{workspace_bytes};
  cudaStream_t bound = nullptr;
  cublasHandle_t legacy = nullptr; ///< mlp_backend::cublas, created on first use

  /// The cuBLAS handle, bound to `bound` with the workspace.
  cublasHandle_t sgemm_handle() {
    if (legacy == nullptr) {
      GPUBENCH_BLAS_TRY(cublasCreate(&legacy));
      GPUBENCH_BLAS_TRY(cublasSetMathMode(legacy, CUBLAS_DEFAULT_MATH));
      GPUBENCH_BLAS_TRY(cublasSetAtomicsMode(legacy, CUBLAS_ATOMICS_NOT_ALLOWED));
      GPUBENCH_BLAS_TRY(cublasSetPointerMode(legacy, CUBLAS_POINTER_MODE_HOST));
      set_legacy_stream();
    }
    return legacy;
  }
  /// cublasSetStream resets the workspace: set it again.
  void set_legacy_stream() {
    GPUBENCH_BLAS_TRY(cublasSetStream(legacy, bound));
    GPUBENCH_BLAS_TRY(cublasSetWorkspace(legacy, workspace.data(), workspace.bytes()));
  }
};

blas_handle::blas_handle() : impl_(std::make_unique<impl>()) {
  GPUBENCH_BLAS_TRY(cublasLtCreate(&impl_->handle));
}

blas_handle::blas_handle(blas_handle&&) noexcept = default;
blas_handle& blas_handle::operator=(blas_handle&&) noexcept = default;

blas_handle::~blas_handle() {
  if (!impl_) return;
  if (impl_->legacy != nullptr) (void)cublasDestroy(impl_->legacy);
  if (impl_->handle != nullptr) (void)cublasLtDestroy(impl_->handle);
}

void blas_handle::bind(cudaStream_t s) {
  if (impl_->bound == s) return;
  impl_->bound = s;
  if (impl_->legacy != nullptr) impl_->set_legacy_stream();
}

// ---- one matrix product ---------------------------------------------------------------------

namespace {

/// The alignment of a pointer in bytes, 4 to 256 (what cuBLASLt's heuristic asks for).
std::uint32_t alignment_of(const void* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = 256;
  while (al > 4 && a % al != 0) al /= 2;
  return al;
}

/// D = op(A) op(B) (m x n, inner dimension k, column-major, float32) with an epilogue: the
/// descriptor and layouts of one of a network's products, and the algorithms chosen for it, one
/// per combination of its pointers' alignments (found on first use, then reused).
class lt_product {
public:
  lt_product(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
             cublasLtEpilogue_t epilogue, const float* bias, const void* aux, int aux_ld) {
    GPUBENCH_BLAS_TRY(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    set(CUBLASLT_MATMUL_DESC_TRANSA, ta);
    set(CUBLASLT_MATMUL_DESC_TRANSB, tb);
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
    if (bias != nullptr) set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    if (aux != nullptr) {
      set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
      set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(aux_ld));
    }
    const bool na = ta == CUBLAS_OP_N;
    const bool nb = tb == CUBLAS_OP_N;
    layout(a_, na ? m : k, na ? k : m);
    layout(b_, nb ? k : n, nb ? n : k);
    layout(d_, m, n);
  }
  lt_product(const lt_product&) = delete;
  lt_product& operator=(const lt_product&) = delete;
  ~lt_product() {
    for (auto* l : {a_, b_, d_})
      if (l != nullptr) (void)cublasLtMatrixLayoutDestroy(l);
    if (desc_ != nullptr) (void)cublasLtMatmulDescDestroy(desc_);
  }

  /// The best algorithm for pointers of these alignments, if cuBLASLt has one for this product.
  bool find(cublasLtHandle_t h, std::uint32_t al_a, std::uint32_t al_b, std::uint32_t al_d,
            cublasLtMatmulAlgo_t& algo) {
    const std::uint32_t key = al_a | (al_b << 10U) | (al_d << 20U);
    for (const auto& [k, found] : algos_)
      if (k == key) {
        algo = found;
        return true;
      }
    cublasLtMatmulPreference_t pref = nullptr;
    GPUBENCH_BLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    try {
      pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
               static_cast<std::uint64_t>(blas_handle::workspace_bytes));
      pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al_a);
      pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al_b);
      pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al_d);
      pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al_d);
      status =
          cublasLtMatmulAlgoGetHeuristic(h, desc_, a_, b_, d_, d_, pref, 1, &result, &returned);
    } catch (...) {
      (void)cublasLtMatmulPreferenceDestroy(pref);
      throw;
    }
    (void)cublasLtMatmulPreferenceDestroy(pref);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0))
      return false;
    GPUBENCH_BLAS_TRY(status);
    algos_.emplace_back(key, result.algo);
    algo = result.algo;
    return true;
  }

  /// Whether cuBLASLt runs this product at the least alignment (4 bytes, a float) of its matrices.
  bool supported(cublasLtHandle_t h) {
    cublasLtMatmulAlgo_t algo{};
    return find(h, 4, 4, 4, algo);
  }

  /// D = op(A) op(B) on `s` with the algorithm for these pointers' alignments.
  void run(cublasLtHandle_t h, void* workspace, std::size_t workspace_bytes, const float* a,
           const float* b, float* d, cudaStream_t s) {
    cublasLtMatmulAlgo_t algo{};
    if (!find(h, alignment_of(a), alignment_of(b), alignment_of(d), algo))
      throw cuda_error(cudaErrorNotSupported,
                       "cuBLASLt has no algorithm for one of the pipeline model's products");
    const float one = 1.0F;
    const float zero = 0.0F;
    GPUBENCH_BLAS_TRY(cublasLtMatmul(h, desc_, &one, a, a_, b, b_, &zero, d, d_, d, d_, &algo,
                                     workspace, workspace_bytes, s));
  }

  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr;
  cublasLtMatrixLayout_t b_ = nullptr;
  cublasLtMatrixLayout_t d_ = nullptr;

private:
  template <class T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& value) {
    GPUBENCH_BLAS_TRY(cublasLtMatmulDescSetAttribute(desc_, attr, &value, sizeof(value)));
  }
  template <class T>
  static void pref_set(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                       const T& value) {
    GPUBENCH_BLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
  }
  static void layout(cublasLtMatrixLayout_t& l, int rows, int cols) {
    GPUBENCH_BLAS_TRY(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), rows));
  }

  std::vector<std::pair<std::uint32_t, cublasLtMatmulAlgo_t>> algos_;
};

} // namespace

// ---- network --------------------------------------------------------------------------------

/// The products of one network: forward, weight gradient and input gradient of every layer (no
/// input gradient for layer 0), built for the fusion chosen.
struct mlp::lt_state {
  mlp_fusion fusion = mlp_fusion::none;
  std::vector<std::unique_ptr<lt_product>> fwd;
  std::vector<std::unique_ptr<lt_product>> dw;
  std::vector<std::unique_ptr<lt_product>> dx;
};

namespace {

/// Bits of a ReLU mask's leading dimension: cuBLASLt wants a multiple of 128.
int mask_ld(int rows) { return (rows + 127) / 128 * 128; }

} // namespace

mlp::mlp(mlp_shape shape, int batch, mlp_backend backend)
    : shape_(std::move(shape)), batch_(batch), backend_(backend), params_(shape_.param_count()),
      grads_(shape_.param_count()) {
  if (shape_.layers() < 1) throw std::invalid_argument("mlp: at least one layer");
  for (int l = 0; l < shape_.layers(); ++l)
    acts_.emplace_back(static_cast<std::size_t>(shape_.sizes[l + 1]) * batch_);
  // A network that trains keeps its hidden layers' ReLU masks for the backward pass (used with
  // mlp_fusion::full); allocated here, so that no product allocates inside a graph capture.
  if (!shape_.relu_last && backend_ == mlp_backend::cublaslt)
    for (int l = 0; l + 1 < shape_.layers(); ++l)
      relu_mask_.emplace_back(static_cast<std::size_t>(mask_ld(shape_.sizes[l + 1]) / 8) *
                              static_cast<std::size_t>(batch_));
  for (auto& d : delta_)
    d = device_buffer<float>(static_cast<std::size_t>(shape_.widest()) * batch_);
  GPUBENCH_CUDA_TRY(cudaMemset(grads_.data(), 0, grads_.bytes()));
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
}

mlp::~mlp() = default;

mlp_fusion mlp::fusion() const noexcept { return lt_ ? lt_->fusion : mlp_fusion::none; }

mlp::lt_state& mlp::lt(blas_handle& blas) {
  if (lt_) return *lt_;
  const cublasLtHandle_t h = blas.impl_->handle;
  const int layers = shape_.layers();
  // The products for one fusion, or none when cuBLASLt lacks an algorithm for one of them.
  const auto build = [&](mlp_fusion f) -> std::unique_ptr<lt_state> {
    auto st = std::make_unique<lt_state>();
    st->fusion = f;
    for (int l = 0; l < layers; ++l) {
      const int in = shape_.sizes[l];
      const int o = shape_.sizes[l + 1];
      const bool relu = l < layers - 1 || shape_.relu_last;
      const bool mask = f == mlp_fusion::full && relu && !shape_.relu_last;
      cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_DEFAULT;
      if (f != mlp_fusion::none)
        ep = mask ? CUBLASLT_EPILOGUE_RELU_AUX_BIAS
                  : (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS);
      st->fwd.push_back(std::make_unique<lt_product>(
          CUBLAS_OP_N, CUBLAS_OP_N, o, batch_, in, ep,
          f != mlp_fusion::none ? params_.data() + shape_.bias_offset(l) : nullptr,
          mask ? relu_mask_[l].data() : nullptr, mask_ld(o)));
      if (!st->fwd.back()->supported(h)) return nullptr;
      if (shape_.relu_last) continue; // forward only
      // dW = delta (o x B) . src^T (B x in)
      st->dw.push_back(std::make_unique<lt_product>(
          CUBLAS_OP_N, CUBLAS_OP_T, o, in, batch_, CUBLASLT_EPILOGUE_DEFAULT, nullptr, nullptr, 0));
      if (!st->dw.back()->supported(h)) return nullptr;
      if (l == 0) {
        st->dx.push_back(nullptr);
        continue;
      }
      // d(src) = W^T (in x o) . delta (o x B); with full fusion through layer l - 1's ReLU (its
      // mask) and summed over the batch into layer l - 1's bias gradient.
      const bool fused = f == mlp_fusion::full;
      st->dx.push_back(std::make_unique<lt_product>(
          CUBLAS_OP_T, CUBLAS_OP_N, in, batch_, o,
          fused ? CUBLASLT_EPILOGUE_DRELU_BGRAD : CUBLASLT_EPILOGUE_DEFAULT,
          fused ? grads_.data() + shape_.bias_offset(l - 1) : nullptr,
          fused ? relu_mask_[l - 1].data() : nullptr, mask_ld(in)));
      if (!st->dx.back()->supported(h)) return nullptr;
    }
    return st;
  };
  for (const auto f : {mlp_fusion::full, mlp_fusion::bias_act, mlp_fusion::none}) {
    lt_ = build(f);
    if (lt_) return *lt_;
  }
  throw cuda_error(cudaErrorNotSupported,
                   "cuBLASLt has no float32 algorithm for the pipeline model's products");
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

void mlp::bias_act(int layer, float* y, cudaStream_t s) {
  const int o = shape_.sizes[layer + 1];
  const std::size_t n = static_cast<std::size_t>(o) * batch_;
  bias_act_kernel<<<blocks_for(n), block, 0, s>>>(y, params_.data() + shape_.bias_offset(layer), o,
                                                  batch_,
                                                  layer < shape_.layers() - 1 || shape_.relu_last);
  GPUBENCH_CHECK_LAUNCH("bias_act_kernel");
  ++launches_;
}

void mlp::forward_layers(blas_handle& blas, const float* x, cudaStream_t s, float* out,
                         cudaEvent_t before_last) {
  if (backend_ == mlp_backend::cublas) {
    forward_sgemm(blas, x, s, out, before_last);
    return;
  }
  lt_state& st = lt(blas);
  auto& b = *blas.impl_;
  const int layers = shape_.layers();
  for (int l = 0; l < layers; ++l) {
    const float* src = l == 0 ? x : acts_[l - 1].data();
    float* dst = (l == layers - 1 && out != nullptr) ? out : acts_[l].data();
    if (l == layers - 1 && before_last != nullptr)
      GPUBENCH_CUDA_TRY(cudaEventRecord(before_last, s));
    st.fwd[l]->run(b.handle, b.workspace.data(), b.workspace.bytes(),
                   params_.data() + shape_.weight_offset(l), src, dst, s);
    ++launches_;
    if (st.fusion == mlp_fusion::none) bias_act(l, dst, s);
  }
}

template <typename WeightGrad, typename InputGrad>
void mlp::backward(const float* x, const float* target, float lr, cudaStream_t s, bool relu_fused,
                   WeightGrad weight_grad, InputGrad input_grad) {
  const int layers = shape_.layers();
  int cur = 0;
  {
    const int o = shape_.outputs();
    mse_grad_kernel<<<blocks_for(static_cast<std::size_t>(o)), block, 0, s>>>(
        acts_.back().data(), target, o, batch_, 1.0F / static_cast<float>(batch_),
        delta_[cur].data(), grads_.data() + shape_.bias_offset(layers - 1));
    GPUBENCH_CHECK_LAUNCH("mse_grad_kernel");
    ++launches_;
  }
  for (int l = layers - 1; l >= 0; --l) {
    const int in = shape_.sizes[l];
    const float* src = l == 0 ? x : acts_[l - 1].data();
    weight_grad(l, delta_[cur].data(), src, grads_.data() + shape_.weight_offset(l));
    ++launches_;
    if (l == 0) break;
    const int nxt = 1 - cur;
    input_grad(l, delta_[cur].data(), delta_[nxt].data());
    ++launches_;
    if (!relu_fused) {
      relu_grad_kernel<<<blocks_for(static_cast<std::size_t>(in)), block, 0, s>>>(
          delta_[nxt].data(), acts_[l - 1].data(), in, batch_,
          grads_.data() + shape_.bias_offset(l - 1));
      GPUBENCH_CHECK_LAUNCH("relu_grad_kernel");
      ++launches_;
    }
    cur = nxt;
  }
  sgd_kernel<<<blocks_for(params_.size()), block, 0, s>>>(params_.data(), grads_.data(), lr,
                                                          params_.size());
  GPUBENCH_CHECK_LAUNCH("sgd_kernel");
  ++launches_;
}

void mlp::train_step(blas_handle& blas, const float* x, const float* target, float lr,
                     cudaStream_t s, cudaEvent_t narrow) {
  if (shape_.relu_last) throw std::logic_error("mlp::train_step: the last layer must be linear");
  forward_layers(blas, x, s, nullptr, narrow);
  auto& b = *blas.impl_;
  if (backend_ == mlp_backend::cublas) {
    const cublasHandle_t h = b.sgemm_handle();
    const float one = 1.0F;
    const float zero = 0.0F;
    backward(
        x, target, lr, s, false,
        [&](int l, const float* delta, const float* src, float* dw) {
          // dW = delta (o x B) . src^T (B x in)
          const int in = shape_.sizes[l];
          const int o = shape_.sizes[l + 1];
          GPUBENCH_BLAS_TRY(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, o, in, batch_, &one, delta, o,
                                        src, in, &zero, dw, o));
        },
        [&](int l, const float* delta, float* dx) {
          // d(src) = W^T (in x o) . delta (o x B); the ReLU of layer l - 1 follows.
          const int in = shape_.sizes[l];
          const int o = shape_.sizes[l + 1];
          GPUBENCH_BLAS_TRY(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, in, batch_, o, &one,
                                        params_.data() + shape_.weight_offset(l), o, delta, o,
                                        &zero, dx, in));
        });
    return;
  }
  lt_state& st = *lt_;
  backward(
      x, target, lr, s, st.fusion == mlp_fusion::full,
      [&](int l, const float* delta, const float* src, float* dw) {
        st.dw[l]->run(b.handle, b.workspace.data(), b.workspace.bytes(), delta, src, dw, s);
      },
      [&](int l, const float* delta, float* dx) {
        st.dx[l]->run(b.handle, b.workspace.data(), b.workspace.bytes(),
                      params_.data() + shape_.weight_offset(l), delta, dx, s);
      });
}

void mlp::forward_sgemm(blas_handle& blas, const float* x, cudaStream_t s, float* out,
                        cudaEvent_t before_last) {
  blas.bind(s);
  const cublasHandle_t h = blas.impl_->sgemm_handle();
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
    ++launches_;
    bias_act(l, dst, s);
  }
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
