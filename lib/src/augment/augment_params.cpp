#include "gpubench/augment/augment_params.hpp"

#include "gpubench/core/random.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpubench {

namespace {

// Random streams: one per step for the parameters, and fixed ones for the synthetic images.
constexpr std::uint64_t params_stream_base = 0x6175676D656E7400ULL; // "augment\0"
constexpr std::uint64_t image_stream = 0x696D616765730000ULL;       // "images"
constexpr std::uint64_t noise_stream = 0x6E6F697365000000ULL;       // "noise"

enum param_field : std::uint64_t { field_top, field_left, field_angle, field_sigma, field_count };

/// Uniform integer in [0, n) from 32 random bits (multiply-shift; bias below 2^-32 * n).
std::uint32_t uniform_below(std::uint64_t bits, std::uint32_t n) {
  return static_cast<std::uint32_t>(((bits >> 32U) * n) >> 32U);
}

} // namespace

augment_shape make_augment_shape(const augment_config& cfg) {
  augment_shape s;
  s.batch = cfg.batch;
  s.channels = cfg.channels;
  s.height = cfg.height;
  s.width = cfg.width;
  s.crop = cfg.crop;
  s.resize = cfg.resize;
  s.radius = cfg.blur / 2;
  s.interp = cfg.interp;
  s.out = cfg.out;
  s.scale = static_cast<float>(cfg.crop) / static_cast<float>(cfg.resize);
  for (int c = 0; c < cfg.channels && c < augment_max_channels; ++c) {
    s.mean[c] = cfg.mean_of(c);
    s.inv_std[c] = 1.0F / cfg.std_of(c);
  }
  return s;
}

std::vector<float> gaussian_weights(double sigma, int radius) {
  std::vector<double> w(static_cast<std::size_t>(2 * radius + 1));
  double sum = 0;
  for (int k = -radius; k <= radius; ++k) {
    const double x = static_cast<double>(k);
    w[static_cast<std::size_t>(k + radius)] = std::exp(-(x * x) / (2.0 * sigma * sigma));
    sum += w[static_cast<std::size_t>(k + radius)];
  }
  std::vector<float> out(w.size());
  std::transform(w.begin(), w.end(), out.begin(),
                 [sum](double v) { return static_cast<float>(v / sum); });
  return out;
}

augment_sample draw_augment_sample(const augment_config& cfg, std::uint64_t seed,
                                   std::uint64_t step, std::uint64_t index) {
  const std::uint64_t stream = params_stream_base + step;
  const auto bits = [&](param_field f) {
    return random_bits(seed, stream, index * field_count + f);
  };
  const auto unit = [&](param_field f) {
    return static_cast<double>(bits(f) >> 11U) * (1.0 / 9007199254740992.0);
  };
  augment_sample s;
  s.top = static_cast<std::int32_t>(
      uniform_below(bits(field_top), static_cast<std::uint32_t>(cfg.height - cfg.crop + 1)));
  s.left = static_cast<std::int32_t>(
      uniform_below(bits(field_left), static_cast<std::uint32_t>(cfg.width - cfg.crop + 1)));
  s.angle_deg = static_cast<float>((2.0 * unit(field_angle) - 1.0) * cfg.degrees);
  const double radians = static_cast<double>(s.angle_deg) * std::numbers::pi / 180.0;
  s.cos_a = static_cast<float>(std::cos(radians));
  s.sin_a = static_cast<float>(std::sin(radians));
  s.sigma = static_cast<float>(cfg.sigma_lo + (cfg.sigma_hi - cfg.sigma_lo) * unit(field_sigma));
  const auto w = gaussian_weights(static_cast<double>(s.sigma), cfg.blur / 2);
  std::copy(w.begin(), w.end(), s.weights);
  return s;
}

std::vector<augment_sample> draw_augment_samples(const augment_config& cfg, std::uint64_t seed,
                                                 std::uint64_t step, int batch) {
  std::vector<augment_sample> out;
  out.reserve(static_cast<std::size_t>(batch));
  for (int i = 0; i < batch; ++i)
    out.push_back(draw_augment_sample(cfg, seed, step, static_cast<std::uint64_t>(i)));
  return out;
}

void fill_synthetic_images(std::uint8_t* out, const augment_config& cfg, std::uint64_t seed,
                           int count, thread_pool& pool) {
  const int h = cfg.height;
  const int w = cfg.width;
  const int channels = cfg.channels;
  const std::size_t plane = static_cast<std::size_t>(h) * static_cast<std::size_t>(w);
  const std::size_t planes = static_cast<std::size_t>(count) * static_cast<std::size_t>(channels);
  pool.parallel_for(planes, [&](std::size_t begin, std::size_t end) {
    for (std::size_t p = begin; p < end; ++p) {
      const std::uint64_t image = p / static_cast<std::size_t>(channels);
      const auto c = static_cast<std::uint64_t>(p % static_cast<std::size_t>(channels));
      // Per image: a disk (centre, radius) and grid phase; per channel: a gradient.
      const auto img_bits = [&](std::uint64_t k) {
        return random_bits(seed, image_stream, image * 64 + k);
      };
      const int disk_x =
          static_cast<int>(uniform_below(img_bits(0), static_cast<std::uint32_t>(w)));
      const int disk_y =
          static_cast<int>(uniform_below(img_bits(1), static_cast<std::uint32_t>(h)));
      const int disk_r =
          8 + static_cast<int>(uniform_below(
                  img_bits(2), static_cast<std::uint32_t>(std::max(1, std::min(h, w) / 4))));
      const int grid = 16 << uniform_below(img_bits(3), 3);
      const int offset = static_cast<int>(uniform_below(img_bits(4 + c), 512));
      const int ax = static_cast<int>(uniform_below(img_bits(20 + c), 7)) - 3;
      const int ay = static_cast<int>(uniform_below(img_bits(40 + c), 7)) - 3;
      std::uint8_t* dst = out + p * plane;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          // A triangle wave keeps the gradient in 0..255 without a jump.
          const int t = ((offset + ax * x + ay * y) % 512 + 512) % 512;
          int v = t < 256 ? t : 511 - t;
          const int dx = x - disk_x;
          const int dy = y - disk_y;
          if (dx * dx + dy * dy <= disk_r * disk_r) v = 255 - v;
          if (x % grid == 0 || y % grid == 0) v = (c % 2 == 0) ? 255 : 0;
          const std::size_t i = static_cast<std::size_t>(y) * static_cast<std::size_t>(w) +
                                static_cast<std::size_t>(x);
          v += static_cast<int>(random_bits(seed, noise_stream, p * plane + i) & 15U) - 8;
          dst[i] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
        }
    }
  });
}

} // namespace gpubench
