// Host helpers shared by the augment launchers, and the traffic each implementation must move.
#include "augment_device.cuh"
#include "gpubench/cuda/error.hpp"

#include "core/per_device.hpp"

#include <algorithm>
#include <tuple>

namespace gpubench::cuda {

namespace augment_detail {

int max_dynamic_shared_bytes() {
  static detail::per_device_cache<int, int> limits;
  return limits.get(0, [](int device) {
    int bytes = 0;
    GPUBENCH_CUDA_TRY(
        cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    return bytes;
  });
}

void allow_dynamic_shared_bytes(const void* kernel, int bytes) {
  // cudaFuncSetAttribute per launch would add host time to every timed sample.
  static detail::per_device_cache<const void*, int> allowed;
  allowed.update(kernel, [&](int /*device*/, int& current) {
    if (current >= bytes) return;
    GPUBENCH_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    current = bytes;
  });
}

int resident_blocks(const void* kernel, int threads, int dynamic_shared_bytes) {
  using launch_shape = std::tuple<const void*, int, int>;
  static detail::per_device_cache<launch_shape, int> known;
  return known.get({kernel, threads, dynamic_shared_bytes}, [&](int /*device*/) {
    return detail::resident_grid(kernel, threads, static_cast<std::size_t>(dynamic_shared_bytes));
  });
}

unsigned grid_for(std::size_t n, int threads) {
  const std::size_t blocks =
      (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, std::size_t{1} << 20U));
}

} // namespace augment_detail

namespace {
double as_double(std::size_t v) { return static_cast<double>(v); }
} // namespace

augment_staged_traffic augment_staged_bytes(const augment_shape& shape) noexcept {
  const double images = as_double(static_cast<std::size_t>(shape.batch)) * shape.channels;
  const double in = images * as_double(shape.input_pixels());
  const double crop = images * shape.crop * static_cast<double>(shape.crop);
  const double out = images * as_double(shape.output_pixels());
  augment_staged_traffic t;
  t.to_float = in * (1 + 4);
  t.crop = crop * (4 + 4);
  t.resize = crop * 4 + out * 4;
  t.rotate = out * (4 + 4);
  t.blur = out * (4 + 4);
  t.normalize = out * (4 + static_cast<double>(dtype_size(shape.out)));
  return t;
}

augment_op_flops augment_flops(const augment_shape& shape) noexcept {
  const double values = as_double(static_cast<std::size_t>(shape.batch)) * shape.channels *
                        as_double(shape.output_pixels());
  const double sample = shape.interp == augment_interp::bilinear ? 9.0 : 0.0;
  augment_op_flops f;
  f.resize = values * sample;
  f.rotate = values * sample;
  f.blur = values * 4.0 * (2.0 * shape.radius + 1.0);
  f.normalize = values * 2.0;
  return f;
}

double augment_fused_bytes(const augment_shape& shape) noexcept {
  const double images = as_double(static_cast<std::size_t>(shape.batch)) * shape.channels;
  return images * (shape.crop * static_cast<double>(shape.crop) +
                   as_double(shape.output_pixels()) * static_cast<double>(dtype_size(shape.out)));
}

std::size_t augment_staged_device_bytes(const augment_shape& shape) noexcept {
  const std::size_t images =
      static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.channels);
  const std::size_t crop =
      static_cast<std::size_t>(shape.crop) * static_cast<std::size_t>(shape.crop);
  return images * sizeof(float) * (shape.input_pixels() + crop + 3 * shape.output_pixels());
}

std::size_t augment_output_bytes(const augment_shape& shape) noexcept {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.channels) *
         shape.output_pixels() * dtype_size(shape.out);
}

} // namespace gpubench::cuda
