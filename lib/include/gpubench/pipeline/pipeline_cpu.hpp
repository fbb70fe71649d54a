#pragma once
// Host side of the pipeline benchmark's model: deterministic initial parameters, a CPU reference
// of the network (double precision, the layout of gpubench/cuda/mlp.hpp) that the GPU's forward,
// backward and SGD are checked against, the pooling reference, and the bitwise weight comparison
// behind the pipeline's verification.
#include "gpubench/cuda/mlp.hpp"
#include "gpubench/results/result.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace gpubench::pipeline_cpu {

/// Weights uniform in +-sqrt(6 / in) (He), biases uniform in +-0.01, from (seed, stream).
std::vector<float> initial_params(const cuda::mlp_shape& shape, std::uint64_t seed,
                                  std::uint64_t stream);

/// Uniform values in [lo, hi) from (seed, stream), index i at position i.
std::vector<float> uniform_values(std::size_t n, float lo, float hi, std::uint64_t seed,
                                  std::uint64_t stream);

/// y = f(x) for a batch (inputs x batch, column-major), every layer in double.
std::vector<double> forward(const cuda::mlp_shape& shape, std::span<const double> params,
                            std::span<const double> x, int batch);

/// One SGD step on loss = sum (y - target)^2 / (2 batch), as mlp::train_step; updates `params`.
void train_step(const cuda::mlp_shape& shape, std::vector<double>& params,
                std::span<const double> x, std::span<const double> target, double lr, int batch);

/// The loss that train_step descends (for gradient checks).
double loss(const cuda::mlp_shape& shape, std::span<const double> params, std::span<const double> x,
            std::span<const double> target, int batch);

/// Average pooling as cuda::launch_avg_pool (images batch x channels x size x size).
std::vector<double> avg_pool(std::span<const float> images, int batch, int channels, int size,
                             int pool, double scale);

/// Bitwise comparison of trained weights: every float's bits must be equal. Reports the number of
/// differing floats, the first one and the largest difference.
verification compare_bitwise(std::span<const float> reference, std::span<const float> got);

/// |got - ref| <= abs_tol + rel_tol |ref| for every element.
verification compare_close(std::span<const double> reference, std::span<const float> got,
                           double rel_tol, double abs_tol);

} // namespace gpubench::pipeline_cpu
