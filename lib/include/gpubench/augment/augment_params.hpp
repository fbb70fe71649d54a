#pragma once
// The augment benchmark's settings and the per-sample random parameters: sample i of step s under
// seed k gets its crop offsets, rotation angle and blur sigma from random_bits(k, stream(s), ...),
// so they do not depend on the batch size, the thread count or the device.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/augment.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpubench {

/// Settings of one augment run, parsed and validated (augment_bench.cpp).
struct augment_config {
  int batch = 32;
  int channels = 3;
  int height = 256;
  int width = 256;
  int crop = 128;
  int resize = 256;
  double degrees = 45;
  augment_interp interp = augment_interp::nearest;
  int blur = 7;
  double sigma_lo = 0.1;
  double sigma_hi = 2.0;
  std::vector<float> mean{0.0F}; ///< one value, or one per channel
  std::vector<float> stddev{1.0F};
  dtype out = dtype::f32;

  [[nodiscard]] float mean_of(int c) const { return mean.size() == 1 ? mean[0] : mean.at(c); }
  [[nodiscard]] float std_of(int c) const { return stddev.size() == 1 ? stddev[0] : stddev.at(c); }
};

/// The shape the kernels and the CPU reference take: sizes, radius, scale, mean, 1 / std.
augment_shape make_augment_shape(const augment_config& cfg);

/// Normalized gaussian taps exp(-x^2 / (2 sigma^2)), x = -radius..radius, summed and divided in
/// double, rounded once to float.
std::vector<float> gaussian_weights(double sigma, int radius);

/// Parameters of sample `index` of step `step`.
augment_sample draw_augment_sample(const augment_config& cfg, std::uint64_t seed,
                                   std::uint64_t step, std::uint64_t index);

/// Parameters of samples 0..batch-1 of `step`.
std::vector<augment_sample> draw_augment_samples(const augment_config& cfg, std::uint64_t seed,
                                                 std::uint64_t step, int batch);

/// Synthetic uint8 input, NCHW: smooth gradients and shapes plus noise, a pure function of
/// (seed, image, channel, y, x) so that any batch size sees the same first images.
void fill_synthetic_images(std::uint8_t* out, const augment_config& cfg, std::uint64_t seed,
                           int count, thread_pool& pool);

} // namespace gpubench
