#pragma once
// Real pictures in (`augment --input DIR`) and before/after pictures out (`--save-samples DIR`).
#include "gpubench/augment/augment_params.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpubench {

/// Fills `count` planar images (C x H x W) from the files of `dir`: image i is file i mod n (in
/// name order), decoded with C channels (1 to 4) and resized to H x W. Throws usage_error naming
/// --input on any file that is not a readable PNG or JPEG.
void load_input_images(std::uint8_t* out, const augment_config& cfg, const std::string& dir,
                       int count);

/// How many images --save-samples writes.
inline constexpr int saved_samples = 4;

/// Creates `dir` (and its parents) and writes and removes a file there; throws usage_error naming
/// --save-samples when either fails. Called at planning time, before anything is measured.
void check_samples_folder(const std::string& dir);

/// Writes sample_<i>.png for the first `count` images: the input (H x W) on the left, the output
/// (S x S, mapped back to 0..255 with v * std + mean) on the right. RGB shows channels 0..2 when
/// there are at least 3, gray shows channel 0 otherwise. Returns the paths written.
std::vector<std::string> save_augment_samples(const std::string& dir, const augment_config& cfg,
                                              const std::uint8_t* before, const float* after,
                                              int count);

} // namespace gpubench
