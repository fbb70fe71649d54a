// The pipeline model's shape: parameter layout, FLOPs and least bytes per batch (mlp.hpp).
#include "gpubench/cuda/mlp.hpp"

#include <algorithm>

namespace gpubench::cuda {

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

} // namespace gpubench::cuda
