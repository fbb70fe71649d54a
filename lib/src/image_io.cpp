// stb is compiled here, and only here, from Debian's headers: PNG and JPEG decoders from memory,
// the PNG encoder to memory. Symbols stay internal to this file.
#include "gpubench/image_io.hpp"

#include "gpubench/errors.hpp"
#include "gpubench/output.hpp"
#include "gpubench/untrusted_file.hpp"

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

#include <algorithm>
#include <array>
#include <cmath>
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

namespace {

/// Taps and weights of one output index along one axis.
struct filter_taps {
  int first = 0;
  std::vector<float> weights;
};

std::vector<filter_taps> triangle_filter(int in, int out) {
  const double scale = static_cast<double>(in) / out;
  const double support = std::max(1.0, scale);
  std::vector<filter_taps> taps(static_cast<std::size_t>(out));
  for (int i = 0; i < out; ++i) {
    const double centre = (i + 0.5) * scale;
    const int lo = std::max(0, static_cast<int>(std::floor(centre - support)));
    const int hi = std::min(in - 1, static_cast<int>(std::ceil(centre + support)));
    auto& t = taps[static_cast<std::size_t>(i)];
    t.first = lo;
    double sum = 0;
    std::vector<double> w;
    for (int j = lo; j <= hi; ++j) {
      const double x = std::fabs((j + 0.5 - centre) / support);
      w.push_back(std::max(0.0, 1.0 - x));
      sum += w.back();
    }
    for (const double v : w) t.weights.push_back(static_cast<float>(sum > 0 ? v / sum : 0.0));
  }
  return taps;
}

} // namespace

image_u8 resize_image(const image_u8& in, int width, int height) {
  if (in.width == width && in.height == height) return in;
  const int ch = in.channels;
  const auto xt = triangle_filter(in.width, width);
  const auto yt = triangle_filter(in.height, height);
  // Rows first into floats, then columns, rounded once.
  std::vector<float> rows(static_cast<std::size_t>(in.height) * static_cast<std::size_t>(width) *
                          static_cast<std::size_t>(ch));
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto& t = xt[static_cast<std::size_t>(x)];
      for (int c = 0; c < ch; ++c) {
        float acc = 0;
        for (std::size_t k = 0; k < t.weights.size(); ++k)
          acc += t.weights[k] *
                 in.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(in.width) +
                            static_cast<std::size_t>(t.first) + k) *
                               static_cast<std::size_t>(ch) +
                           static_cast<std::size_t>(c)];
        rows[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
              static_cast<std::size_t>(x)) *
                 static_cast<std::size_t>(ch) +
             static_cast<std::size_t>(c)] = acc;
      }
    }
  image_u8 out{width, height, ch, {}};
  out.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
                    static_cast<std::size_t>(ch));
  for (int y = 0; y < height; ++y) {
    const auto& t = yt[static_cast<std::size_t>(y)];
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < ch; ++c) {
        float acc = 0;
        for (std::size_t k = 0; k < t.weights.size(); ++k)
          acc += t.weights[k] *
                 rows[((static_cast<std::size_t>(t.first) + k) * static_cast<std::size_t>(width) +
                       static_cast<std::size_t>(x)) *
                          static_cast<std::size_t>(ch) +
                      static_cast<std::size_t>(c)];
        out.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                    static_cast<std::size_t>(x)) *
                       static_cast<std::size_t>(ch) +
                   static_cast<std::size_t>(c)] =
            static_cast<std::uint8_t>(std::clamp(std::lround(acc), 0L, 255L));
      }
  }
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
