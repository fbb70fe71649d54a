#pragma once
// PNG and JPEG in, PNG out and resizing for `augment --input` and `--save-samples`, through
// Debian's stb headers (libstb-dev). Reading is bounded: the file size and the image dimensions are
// checked before anything is decoded.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

inline constexpr std::uintmax_t max_image_file_bytes = std::uintmax_t{256} << 20U;
inline constexpr int max_image_side = 16384;
inline constexpr std::uint64_t max_image_pixels = std::uint64_t{1} << 28U;
/// Decode budget of one --input image, checked on the dimensions its header claims before any
/// pixel is decoded: a few hundred KB of PNG can claim 16384x16384 (1.7 GB and seconds to
/// decode). 2^26 pixels (8192x8192, 64 Mpixel) is above any camera's; decoding it takes under a
/// second and 256 MB at most.
inline constexpr std::uint64_t max_decode_pixels = std::uint64_t{1} << 26U;
/// Wall-time budget for decoding all --input images of a run, checked after each image.
inline constexpr double max_decode_seconds = 60.0;

/// 8-bit pixels, interleaved (height x width x channels), channels 1 to 4.
struct image_u8 {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<std::uint8_t> pixels;
};

/// The regular, non-hidden files of `dir` in name order; throws usage_error naming `option` when
/// it is not a readable directory or holds no such file.
std::vector<std::string> list_image_files(const std::string& dir, std::string_view option);

/// Checks that `path` is a PNG or JPEG within the limits; throws usage_error naming `option`.
void probe_image(const std::string& path, std::string_view option);

/// Decodes `path` with `channels` channels (stb converts: gray <-> RGB, alpha added or dropped),
/// after checking the header's claimed size against max_decode_pixels.
image_u8 read_image(const std::string& path, int channels, std::string_view option);

/// Resamples to width x height with stb_image_resize's triangle filter, whose support widens with
/// the scale when shrinking (antialiased bilinear, as torchvision's antialias=True), half-pixel
/// centres, clamped edges. Throws std::bad_alloc when stb cannot allocate its buffers.
image_u8 resize_image(const image_u8& in, int width, int height);

/// Writes a PNG (channels 1 to 4); throws usage_error naming `option` when it cannot.
void write_png(const std::string& path, const image_u8& img, std::string_view option);

} // namespace gpubench
