// resize_image (stb_image_resize): shapes, constants kept, antialiased shrinking, linear ramps.
#include "gpubench/augment/image_io.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>

using namespace gpubench;

namespace {

image_u8 filled(int w, int h, int c, std::uint8_t v) {
  return {w, h, c,
          std::vector<std::uint8_t>(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) *
                                        static_cast<std::size_t>(c),
                                    v)};
}

int at(const image_u8& img, int x, int y, int c) {
  return img.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) +
                     static_cast<std::size_t>(x)) *
                        static_cast<std::size_t>(img.channels) +
                    static_cast<std::size_t>(c)];
}

} // namespace

TEST_CASE("resizing keeps the shape asked for and a constant image constant", "[image]") {
  for (const int c : {1, 3, 4}) {
    const auto in = filled(300, 200, c, 77);
    for (const auto& [w, h] : {std::pair{256, 256}, std::pair{64, 31}, std::pair{1000, 7}}) {
      const auto out = resize_image(in, w, h);
      CHECK(out.width == w);
      CHECK(out.height == h);
      CHECK(out.channels == c);
      REQUIRE(out.pixels.size() == static_cast<std::size_t>(w) * static_cast<std::size_t>(h) *
                                       static_cast<std::size_t>(c));
      for (const auto p : out.pixels) REQUIRE(p == 77);
    }
  }
}

TEST_CASE("resizing to the same size returns the image unchanged", "[image]") {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  auto in = filled(33, 17, 3, 0);
  for (auto& p : in.pixels) p = static_cast<std::uint8_t>(rng() % 256);
  CHECK(resize_image(in, 33, 17).pixels == in.pixels);
}

TEST_CASE("shrinking averages fine detail away (antialiasing)", "[image]") {
  // Alternating black and white columns, halved: every output pixel covers both, so mid grey.
  auto in = filled(256, 64, 1, 0);
  for (int y = 0; y < 64; ++y)
    for (int x = 1; x < 256; x += 2)
      in.pixels[static_cast<std::size_t>(y) * 256 + static_cast<std::size_t>(x)] = 255;
  const auto out = resize_image(in, 128, 32);
  for (int y = 0; y < 32; ++y)
    for (int x = 1; x < 127; ++x) REQUIRE(std::abs(at(out, x, y, 0) - 128) <= 1);
}

TEST_CASE("enlarging a linear ramp stays a monotone ramp between its ends", "[image]") {
  auto in = filled(16, 1, 1, 0);
  for (int x = 0; x < 16; ++x)
    in.pixels[static_cast<std::size_t>(x)] = static_cast<std::uint8_t>(x * 16);
  const auto out = resize_image(in, 64, 1);
  for (int x = 1; x < 64; ++x) REQUIRE(at(out, x, 0, 0) >= at(out, x - 1, 0, 0));
  CHECK(at(out, 0, 0, 0) <= 8);
  CHECK(at(out, 63, 0, 0) >= 232);
}
