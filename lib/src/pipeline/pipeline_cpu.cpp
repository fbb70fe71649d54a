#include "gpubench/pipeline/pipeline_cpu.hpp"

#include "gpubench/core/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpubench::pipeline_cpu {

namespace {

std::size_t idx(int row, int col, int rows) {
  return static_cast<std::size_t>(col) * static_cast<std::size_t>(rows) +
         static_cast<std::size_t>(row);
}

/// Outputs of every layer (after the activation), layer by layer.
std::vector<std::vector<double>> activations(const cuda::mlp_shape& shape,
                                             std::span<const double> params,
                                             std::span<const double> x, int batch) {
  std::vector<std::vector<double>> acts;
  const int layers = shape.layers();
  for (int l = 0; l < layers; ++l) {
    const int in = shape.sizes[l];
    const int out = shape.sizes[l + 1];
    const double* w = params.data() + shape.weight_offset(l);
    const double* bias = params.data() + shape.bias_offset(l);
    const std::span<const double> src = l == 0 ? x : std::span<const double>(acts.back());
    const bool relu = l < layers - 1 || shape.relu_last;
    std::vector<double> y(static_cast<std::size_t>(out) * batch);
    for (int b = 0; b < batch; ++b)
      for (int o = 0; o < out; ++o) {
        double acc = bias[o];
        for (int i = 0; i < in; ++i) acc += w[idx(o, i, out)] * src[idx(i, b, in)];
        y[idx(o, b, out)] = relu ? std::max(acc, 0.0) : acc;
      }
    acts.push_back(std::move(y));
  }
  return acts;
}

} // namespace

std::vector<float> uniform_values(std::size_t n, float lo, float hi, std::uint64_t seed,
                                  std::uint64_t stream) {
  std::vector<float> v(n);
  const random_sequence r(seed, stream);
  for (std::size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * r.unit_float(i);
  return v;
}

std::vector<float> initial_params(const cuda::mlp_shape& shape, std::uint64_t seed,
                                  std::uint64_t stream) {
  std::vector<float> p(shape.param_count());
  std::uint64_t k = 0;
  for (int l = 0; l < shape.layers(); ++l) {
    const auto bound = static_cast<float>(std::sqrt(6.0 / shape.sizes[l]));
    const std::size_t w0 = shape.weight_offset(l);
    const std::size_t b0 = shape.bias_offset(l);
    for (std::size_t i = w0; i < b0; ++i)
      p[i] = bound * (2.0F * random_unit_float(seed, stream, k++) - 1.0F);
    for (std::size_t i = b0; i < b0 + static_cast<std::size_t>(shape.sizes[l + 1]); ++i)
      p[i] = 0.01F * (2.0F * random_unit_float(seed, stream, k++) - 1.0F);
  }
  return p;
}

std::vector<double> forward(const cuda::mlp_shape& shape, std::span<const double> params,
                            std::span<const double> x, int batch) {
  return activations(shape, params, x, batch).back();
}

double loss(const cuda::mlp_shape& shape, std::span<const double> params, std::span<const double> x,
            std::span<const double> target, int batch) {
  const auto y = forward(shape, params, x, batch);
  double sum = 0;
  for (std::size_t i = 0; i < y.size(); ++i) sum += (y[i] - target[i]) * (y[i] - target[i]);
  return sum / (2.0 * batch);
}

void train_step(const cuda::mlp_shape& shape, std::vector<double>& params,
                std::span<const double> x, std::span<const double> target, double lr, int batch) {
  const auto acts = activations(shape, params, x, batch);
  std::vector<double> grads(params.size(), 0.0);
  const int layers = shape.layers();
  std::vector<double> delta(acts.back().size());
  for (std::size_t i = 0; i < delta.size(); ++i) delta[i] = (acts.back()[i] - target[i]) / batch;
  for (int l = layers - 1; l >= 0; --l) {
    const int in = shape.sizes[l];
    const int out = shape.sizes[l + 1];
    const std::span<const double> src = l == 0 ? x : std::span<const double>(acts[l - 1]);
    double* gw = grads.data() + shape.weight_offset(l);
    double* gb = grads.data() + shape.bias_offset(l);
    for (int o = 0; o < out; ++o)
      for (int b = 0; b < batch; ++b) {
        const double d = delta[idx(o, b, out)];
        gb[o] += d;
        for (int i = 0; i < in; ++i) gw[idx(o, i, out)] += d * src[idx(i, b, in)];
      }
    if (l == 0) break;
    const double* w = params.data() + shape.weight_offset(l);
    std::vector<double> prev(static_cast<std::size_t>(in) * batch, 0.0);
    for (int b = 0; b < batch; ++b)
      for (int i = 0; i < in; ++i) {
        double acc = 0;
        for (int o = 0; o < out; ++o) acc += w[idx(o, i, out)] * delta[idx(o, b, out)];
        prev[idx(i, b, in)] = acts[l - 1][idx(i, b, in)] > 0 ? acc : 0.0;
      }
    delta = std::move(prev);
  }
  for (std::size_t i = 0; i < params.size(); ++i) params[i] -= lr * grads[i];
}

std::vector<double> avg_pool(std::span<const float> images, int batch, int channels, int size,
                             int pool, double scale) {
  const int side = size / pool;
  std::vector<double> out(static_cast<std::size_t>(batch) * channels * side * side);
  std::size_t k = 0;
  for (int plane = 0; plane < batch * channels; ++plane)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        double sum = 0;
        for (int dy = 0; dy < pool; ++dy)
          for (int dx = 0; dx < pool; ++dx)
            sum += images[static_cast<std::size_t>(plane) * size * size +
                          static_cast<std::size_t>(y * pool + dy) * size +
                          static_cast<std::size_t>(x * pool + dx)];
        out[k++] = sum * scale;
      }
  return out;
}

verification compare_bitwise(std::span<const float> reference, std::span<const float> got) {
  verification v;
  v.performed = true;
  v.method = "bitwise equal";
  v.checked = reference.size();
  if (got.size() != reference.size()) {
    v.mismatches = reference.size();
    v.details["error"] = fmt::format("{} values, expected {}", got.size(), reference.size());
    return v;
  }
  for (std::size_t i = 0; i < reference.size(); ++i) {
    // Equal bits count only for finite values: matching NaNs are not a verified result.
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
    if (std::isfinite(reference[i]) && std::memcmp(&reference[i], &got[i], sizeof(float)) == 0)
      continue;
    if (v.mismatches == 0) {
      v.details["first_mismatch"] = i;
      v.details["first_expected"] = reference[i];
      v.details["first_got"] = got[i];
    }
    ++v.mismatches;
    const double diff = std::fabs(static_cast<double>(reference[i]) - got[i]);
    if (std::isfinite(diff)) v.max_abs_error = std::max(v.max_abs_error, diff);
  }
  v.passed = v.mismatches == 0;
  return v;
}

verification compare_close(std::span<const double> reference, std::span<const float> got,
                           double rel_tol, double abs_tol) {
  verification v;
  v.performed = true;
  v.method = fmt::format("|got - ref| <= {} + {} |ref|", abs_tol, rel_tol);
  v.tolerance = abs_tol;
  v.checked = reference.size();
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double g = i < got.size() ? got[i] : std::nan("");
    const double diff = std::fabs(g - reference[i]);
    if (!(diff <= abs_tol + rel_tol * std::fabs(reference[i]))) {
      if (v.mismatches == 0) {
        v.details["first_mismatch"] = i;
        v.details["first_expected"] = reference[i];
        v.details["first_got"] = g;
      }
      ++v.mismatches;
    }
    if (std::isfinite(diff)) v.max_abs_error = std::max(v.max_abs_error, diff);
  }
  v.passed = v.mismatches == 0;
  return v;
}

} // namespace gpubench::pipeline_cpu
