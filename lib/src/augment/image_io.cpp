// stb is compiled here, and only here, from Debian's headers: PNG and JPEG decoders from memory,
// the PNG encoder to memory, the resampler. Symbols stay internal to this file.
#include "gpubench/augment/image_io.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#include <stb/stb_image.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <new>

namespace gpubench {

namespace fs = std::filesystem;

namespace {

std::vector<unsigned char> read_bounded(const std::string& path, std::string_view option) {
  // Regular files only (a FIFO or a device among the images is refused by type, not read).
  try {
    const std::string text = read_untrusted_file(path, "image", max_image_file_bytes);
    return {text.begin(), text.end()};
  } catch (const usage_error& e) {
    throw usage_error(fmt::format("--{}: {}", option, e.what()));
  } catch (const std::bad_alloc&) {
    throw usage_error(fmt::format("--{}: out of memory while reading '{}'", option, clip(path)));
  }
}

bool png_or_jpeg(const std::vector<unsigned char>& b) {
  static constexpr std::array<unsigned char, 8> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() >= png.size() && std::equal(png.begin(), png.end(), b.begin())) return true;
  return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

struct probed {
  std::vector<unsigned char> bytes;
  int width = 0;
  int height = 0;
};

probed probe(const std::string& path, std::string_view option) {
  probed p{read_bounded(path, option)};
  if (!png_or_jpeg(p.bytes))
    throw usage_error(fmt::format("--{}: '{}' is not a PNG or JPEG image", option, path));
  int comp = 0;
  if (stbi_info_from_memory(p.bytes.data(), static_cast<int>(p.bytes.size()), &p.width, &p.height,
                            &comp) == 0)
    throw usage_error(
        fmt::format("--{}: '{}' cannot be decoded: {}", option, path, stbi_failure_reason()));
  if (p.width <= 0 || p.height <= 0 || p.width > max_image_side || p.height > max_image_side ||
      static_cast<std::uint64_t>(p.width) * static_cast<std::uint64_t>(p.height) > max_image_pixels)
    throw usage_error(fmt::format("--{}: '{}' is {}x{} pixels, outside the limits ({} per side, "
                                  "{} in all)",
                                  option, clip(path), p.width, p.height, max_image_side,
                                  max_image_pixels));
  if (static_cast<std::uint64_t>(p.width) * static_cast<std::uint64_t>(p.height) >
      max_decode_pixels)
    throw usage_error(fmt::format("--{}: '{}' claims {}x{} pixels, more than the decode budget of "
                                  "{} pixels (8192x8192) per image; nothing was decoded (shrink "
                                  "it first)",
                                  option, clip(path), p.width, p.height, max_decode_pixels));
  return p;
}

} // namespace

std::vector<std::string> list_image_files(const std::string& dir, std::string_view option) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw usage_error(fmt::format("--{}: '{}' is not a directory", option, dir));
  std::vector<std::string> files;
  fs::directory_iterator it(dir, ec);
  if (ec) throw usage_error(fmt::format("--{}: cannot list '{}': {}", option, dir, ec.message()));
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (entry.is_directory(ec)) continue;
    files.push_back(entry.path().string());
  }
  if (files.empty()) throw usage_error(fmt::format("--{}: '{}' holds no image files", option, dir));
  std::sort(files.begin(), files.end());
  return files;
}

void probe_image(const std::string& path, std::string_view option) { (void)probe(path, option); }

image_u8 read_image(const std::string& path, int channels, std::string_view option) {
  const probed p = probe(path, option);
  int w = 0;
  int h = 0;
  int comp = 0;
  const std::unique_ptr<stbi_uc, void (*)(void*)> data(
      stbi_load_from_memory(p.bytes.data(), static_cast<int>(p.bytes.size()), &w, &h, &comp,
                            channels),
      stbi_image_free);
  if (!data)
    throw usage_error(
        fmt::format("--{}: '{}' cannot be decoded: {}", option, path, stbi_failure_reason()));
  image_u8 img{w, h, channels, {}};
  img.pixels.assign(data.get(), data.get() + static_cast<std::size_t>(w) *
                                                 static_cast<std::size_t>(h) *
                                                 static_cast<std::size_t>(channels));
  return img;
}

image_u8 resize_image(const image_u8& in, int width, int height) {
  if (in.width == width && in.height == height) return in;
  image_u8 out{width, height, in.channels, {}};
  out.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
                    static_cast<std::size_t>(in.channels));
  // Triangle filter in linear space with clamped edges; no channel is treated as alpha, so every
  // channel is filtered alike.
  if (stbir_resize_uint8_generic(in.pixels.data(), in.width, in.height, in.width * in.channels,
                                 out.pixels.data(), width, height, width * in.channels, in.channels,
                                 STBIR_ALPHA_CHANNEL_NONE, 0, STBIR_EDGE_CLAMP,
                                 STBIR_FILTER_TRIANGLE, STBIR_COLORSPACE_LINEAR, nullptr) == 0)
    throw std::bad_alloc(); // stb fails only when it cannot allocate its work buffers
  return out;
}

void write_png(const std::string& path, const image_u8& img, std::string_view option) {
  std::string bytes;
  const auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                               static_cast<std::size_t>(size));
  };
  if (stbi_write_png_to_func(append, &bytes, img.width, img.height, img.channels, img.pixels.data(),
                             img.width * img.channels) == 0)
    throw usage_error(fmt::format("--{}: cannot encode '{}' as PNG", option, path));
  try {
    write_file_atomically(path, bytes);
  } catch (const std::exception& e) {
    throw usage_error(fmt::format("--{}: cannot write '{}': {}", option, path, e.what()));
  }
}

} // namespace gpubench
