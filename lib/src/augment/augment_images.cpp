#include "gpubench/augment/augment_images.hpp"

#include "gpubench/augment/image_io.hpp"
#include "gpubench/core/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace gpubench {

void load_input_images(std::uint8_t* out, const augment_config& cfg, const std::string& dir,
                       int count) {
  const auto files = list_image_files(dir, "input");
  const int distinct = std::min(count, static_cast<int>(files.size()));
  const std::size_t plane =
      static_cast<std::size_t>(cfg.height) * static_cast<std::size_t>(cfg.width);
  const std::size_t image_bytes = plane * static_cast<std::size_t>(cfg.channels);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < distinct; ++i) {
    // Each image's size was checked before decoding (max_decode_pixels); the time budget bounds
    // the whole set, however many images there are.
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    if (spent.count() > max_decode_seconds)
      throw usage_error(fmt::format("--input: decoding {} of the {} images took {:.0f} s, more "
                                    "than the budget of {:.0f} s; use fewer or smaller images",
                                    i, distinct, spent.count(), max_decode_seconds));
    const image_u8 img =
        resize_image(read_image(files[static_cast<std::size_t>(i)], cfg.channels, "input"),
                     cfg.width, cfg.height);
    std::uint8_t* dst = out + static_cast<std::size_t>(i) * image_bytes;
    for (std::size_t p = 0; p < plane; ++p)
      for (int c = 0; c < cfg.channels; ++c)
        dst[static_cast<std::size_t>(c) * plane + p] =
            img.pixels[p * static_cast<std::size_t>(cfg.channels) + static_cast<std::size_t>(c)];
  }
  for (int i = distinct; i < count; ++i)
    std::copy_n(out + static_cast<std::size_t>(i % distinct) * image_bytes, image_bytes,
                out + static_cast<std::size_t>(i) * image_bytes);
}

void check_samples_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw usage_error(fmt::format("--save-samples: cannot create '{}': {}", dir, ec.message()));
  std::string probe = (std::filesystem::path(dir) / ".gpubench-probe.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw usage_error(
        fmt::format("--save-samples: cannot write a file in '{}': {}", dir, std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

std::vector<std::string> save_augment_samples(const std::string& dir, const augment_config& cfg,
                                              const std::uint8_t* before, const float* after,
                                              int count) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw usage_error(fmt::format("--save-samples: cannot create '{}': {}", dir, ec.message()));
  const int shown = cfg.channels >= 3 ? 3 : 1;
  const int gap = 8;
  const int s = cfg.resize;
  const int width = cfg.width + gap + s;
  const int height = std::max(cfg.height, s);
  const std::size_t in_plane =
      static_cast<std::size_t>(cfg.height) * static_cast<std::size_t>(cfg.width);
  const std::size_t out_plane = static_cast<std::size_t>(s) * static_cast<std::size_t>(s);
  std::vector<std::string> written;
  for (int i = 0; i < count; ++i) {
    image_u8 img{width, height, shown, {}};
    img.pixels.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
                          static_cast<std::size_t>(shown),
                      std::uint8_t{0});
    const auto put = [&](int x, int y, int c, std::uint8_t v) {
      img.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                  static_cast<std::size_t>(x)) *
                     static_cast<std::size_t>(shown) +
                 static_cast<std::size_t>(c)] = v;
    };
    const std::uint8_t* in = before + static_cast<std::size_t>(i) * cfg.channels * in_plane;
    const float* out = after + static_cast<std::size_t>(i) * cfg.channels * out_plane;
    for (int c = 0; c < shown; ++c) {
      for (int y = 0; y < cfg.height; ++y)
        for (int x = 0; x < cfg.width; ++x)
          put(x, y, c,
              in[static_cast<std::size_t>(c) * in_plane + static_cast<std::size_t>(y) * cfg.width +
                 x]);
      const float m = cfg.mean_of(c);
      const float sd = cfg.std_of(c);
      for (int y = 0; y < s; ++y)
        for (int x = 0; x < s; ++x) {
          const float v =
              out[static_cast<std::size_t>(c) * out_plane + static_cast<std::size_t>(y) * s + x];
          const float shown_v = std::isfinite(v) ? v * sd + m : 0.0F;
          put(cfg.width + gap + x, y, c,
              static_cast<std::uint8_t>(std::clamp(std::lround(shown_v), 0L, 255L)));
        }
    }
    const std::string path =
        (std::filesystem::path(dir) / fmt::format("sample_{}.png", i)).string();
    write_png(path, img, "save-samples");
    written.push_back(path);
  }
  return written;
}

} // namespace gpubench
