#pragma once
// The fused augment kernel in three files: augment_fused.cu fills the launch arguments and picks a
// kernel, augment_fused_generic.cu holds the kernel for any shape, augment_fused_fast.cu the one
// for the default shape (3 channels, radius 3). This header is what the three share.
#include "augment_device.cuh"

#include <cuda_runtime_api.h>

namespace gpubench::cuda::augment_detail {

/// Output sides up to this tabulate their resize taps in shared memory; larger ones compute them.
constexpr int resize_table_max = 1024;

struct fused_args : shape_args {
  const std::uint8_t* __restrict__ input;
  const augment_sample* __restrict__ samples;
  void* __restrict__ out;
  int tiles_x;
  int tiles_per_image;
  int channel_group;
  bool tabulated;
  /// 0x4B000000, the bits of 2^23 (see biased_channel). A parameter rather than a literal: as a
  /// literal ptxas puts it in PRMT's one immediate slot and rebuilds the byte selectors in
  /// registers in every iteration of the sample loop, a dozen extra moves per sample.
  std::uint32_t float_bias;
  int strip;            ///< fast kernel: tiles per block, down one tile column
  int long_columns;     ///< fast kernel: columns run in strips; the later ones one tile per block
  int tiles_y;          ///< fast kernel: tile rows
  int per_column;       ///< fast kernel: strips per column, tiles_y / strip
  float inv_per_column; ///< fast kernel: 1 / per_column, 1 / tiles_y, 1 / tiles_x (div_small)
  float inv_tiles_y;
  float inv_tiles_x;
  int first_image; ///< fast kernel: image of the launch's first column (launches go in chunks)
};

using fused_kernel = void (*)(fused_args);

/// Whether the fast kernel serves `shape`: 3 channels, radius 3, an output side that is a multiple
/// of 32 and an input width that is a multiple of 4.
bool fused_fast_applies(const augment_shape& shape);

/// Launch the fast or the generic kernel over the batch; `a` holds the fields common to both.
void launch_fused_fast(fused_args a, const augment_shape& shape, cudaStream_t s);
void launch_fused_generic(fused_args a, const augment_shape& shape, cudaStream_t s);

} // namespace gpubench::cuda::augment_detail
