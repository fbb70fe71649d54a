// The fused augment kernel: crop, resize, rotate, blur and normalize in one launch. This file fills
// the launch arguments and picks the kernel: the fast one for the default shape
// (augment_fused_fast.cu), the generic one otherwise (augment_fused_generic.cu).
#include "augment_fused.cuh"

#include <stdexcept>

namespace gpubench::cuda {

void launch_augment_fused(const augment_shape& shape, const std::uint8_t* input,
                          const augment_sample* samples, void* out, cudaStream_t s) {
  using namespace augment_detail;
  if (shape.batch == 0) return;
  if (shape.out == dtype::f64) throw std::invalid_argument("augment: f64 output is not offered");
  fused_args a{};
  fill_shape_args(a, shape);
  a.input = input;
  a.samples = samples;
  a.out = out;
  a.tiles_x = (shape.resize + tile_w - 1) / tile_w;
  a.tiles_per_image = a.tiles_x * ((shape.resize + tile_h - 1) / tile_h);
  a.tabulated = shape.resize <= resize_table_max;
  a.float_bias = 0x4B000000U;
  if (fused_fast_applies(shape))
    launch_fused_fast(a, shape, s);
  else
    launch_fused_generic(a, shape, s);
}

} // namespace gpubench::cuda
