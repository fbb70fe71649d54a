// augment's parameter table (the CLI options, run-file keys and point keys, each default written
// once), the checks that span parameters, and the settings of a planned point.
#include "gpubench/augment/augment_bench.hpp"

#include "gpubench/augment/image_io.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace gpubench {

using nlohmann::json;

namespace {

constexpr double max_batch = 1U << 20U;
constexpr double max_size = 16384;
constexpr double max_resize = 8192;

constexpr std::array<word_choice<augment_interp>, 2> interp_words{
    {{"nearest", augment_interp::nearest}, {"bilinear", augment_interp::bilinear}}};

/// "LO:HI" or one value, both positive, LO <= HI.
std::pair<double, double> parse_sigma(const std::string& text) {
  const auto colon = text.find(':');
  const auto lo = parse_number_list(text.substr(0, colon), "sigma");
  const auto hi =
      colon == std::string::npos ? lo : parse_number_list(text.substr(colon + 1), "sigma");
  if (lo.size() != 1 || hi.size() != 1)
    throw usage_error(fmt::format("--sigma: '{}' is not LO:HI or one value", clip(text)));
  if (!(lo[0] > 0) || !(hi[0] > 0))
    throw usage_error(fmt::format("--sigma: '{}': sigma must be positive", clip(text)));
  if (lo[0] > hi[0])
    throw usage_error(fmt::format("--sigma: '{}' is reversed: LO must not exceed HI", clip(text)));
  if (hi[0] > 1e6) throw usage_error(fmt::format("--sigma: '{}' is out of range", clip(text)));
  // Drawn and used as float32: a sigma that rounds to 0 there makes every blur weight NaN.
  (void)to_float32(lo[0], "sigma");
  (void)to_float32(hi[0], "sigma");
  return {lo[0], hi[0]};
}

/// One value or one per channel, each within float32's range (and positive for --std).
std::vector<float> per_channel(const json& values, const char* name, int channels, bool positive) {
  const auto xs = values.get<std::vector<double>>();
  if (xs.size() != 1 && xs.size() != static_cast<std::size_t>(channels))
    throw usage_error(fmt::format("--{}: give one value or one per channel ({}), not {}", name,
                                  channels, xs.size()));
  std::vector<float> out;
  for (const double x : xs) {
    if (positive && !(x > 0)) throw usage_error(fmt::format("--{}: {} must be positive", name, x));
    if (std::fabs(x) > 1e30 || (positive && x < 1e-30))
      throw usage_error(fmt::format("--{}: {} is out of range for float32", name, x));
    out.push_back(static_cast<float>(x));
  }
  return out;
}

} // namespace

/// The checks that span parameters, and the canonical forms of height, width, sigma, mean, std.
void finish_augment_point(json& p, const json& all, const common_options& /*opts*/) {
  const auto channels = p.at("channels").get<std::uint64_t>();
  if (channels == 0) throw usage_error("--channels: 0 channels: an image needs at least 1");
  if (channels > static_cast<std::uint64_t>(augment_max_channels))
    throw usage_error(fmt::format("--channels: {} is more than the {} supported", channels,
                                  augment_max_channels));
  (void)to_float32(p.at("degrees").get<double>(), "degrees"); // the kernels take it as float32
  const auto blur = p.at("blur").get<std::uint64_t>();
  if (blur == 0 || blur % 2 == 0 || blur > static_cast<std::uint64_t>(augment_max_blur))
    throw usage_error(
        fmt::format("--blur: {} is not an odd kernel size from 1 to {}", blur, augment_max_blur));
  if (!p.contains("height")) p["height"] = all.at("size");
  if (!p.contains("width")) p["width"] = all.at("size");
  const int height = p.at("height").get<int>();
  const int width = p.at("width").get<int>();
  if (static_cast<std::uint64_t>(height) * static_cast<std::uint64_t>(width) > max_image_pixels)
    throw usage_error(fmt::format("--height/--width: {}x{} is more than {} pixels", height, width,
                                  max_image_pixels));
  const int crop = p.at("crop").get<int>();
  if (crop > height || crop > width)
    throw usage_error(
        fmt::format("--crop {} is larger than the image ({}x{})", crop, width, height));
  const int resize = p.at("resize").get<int>();
  if (static_cast<int>(blur) / 2 >= resize)
    throw usage_error(fmt::format("--blur: a {}-tap kernel needs an output of at least {} pixels "
                                  "(--resize {})",
                                  blur, blur / 2 + 1, resize));
  const auto [lo, hi] = parse_sigma(p.at("sigma").get<std::string>());
  p["sigma"] = fmt::format("{}:{}", lo, hi);
  p["mean"] = per_channel(p.at("mean"), "mean", static_cast<int>(channels), false);
  p["std"] = per_channel(p.at("std"), "std", static_cast<int>(channels), true);
}

const std::vector<param_spec>& augment_param_table() {
  using k = param_kind;
  static const std::vector<param_spec> table{
      {.name = "batch",
       .help = "images per batch: 32, lists 32,128,256, ranges 32:256:x2",
       .default_value = "32",
       .sweepable = true,
       .kind = k::size,
       .min = 1,
       .max = max_batch},
      {.name = "size",
       .help = "input image side (height and width)",
       .default_value = "256",
       .kind = k::size,
       .min = 1,
       .max = max_size,
       .in_point = false},
      {.name = "height",
       .help = "input image height (default: --size)",
       .kind = k::size,
       .min = 1,
       .max = max_size},
      {.name = "width",
       .help = "input image width (default: --size)",
       .kind = k::size,
       .min = 1,
       .max = max_size},
      {.name = "channels",
       .help = "channels per image (1 to 16; 1 to 4 with --input)",
       .default_value = "3",
       .kind = k::size},
      {.name = "crop",
       .help = "side of the random square crop",
       .default_value = "128",
       .kind = k::size,
       .min = 1,
       .max = max_size},
      {.name = "resize",
       .help = "side the crop is resized to (bilinear, half-pixel centres)",
       .default_value = "256",
       .kind = k::size,
       .min = 1,
       .max = max_resize},
      {.name = "degrees",
       .help = "rotation angle drawn uniformly in [-D, +D] degrees, counter-clockwise",
       .default_value = "45",
       .kind = k::number,
       .min = 0,
       .max = 180},
      {.name = "interp",
       .help = "rotation sampling",
       .default_value = "nearest",
       .kind = k::word,
       .choices = word_names<augment_interp>(interp_words)},
      {.name = "blur",
       .help = "gaussian kernel size: odd, 1 to 31",
       .default_value = "7",
       .kind = k::size},
      {.name = "sigma",
       .help = "blur sigma drawn uniformly in LO:HI per image (or one value), positive",
       .default_value = "0.1:2.0",
       .kind = k::text,
       .metavar = "LO:HI"},
      {.name = "mean",
       .help = "normalize: subtracted, one value or one per channel",
       .default_value = "0",
       .kind = k::numbers},
      {.name = "std",
       .help = "normalize: divided by, one value or one per channel (positive)",
       .default_value = "1",
       .kind = k::numbers},
      {.name = "out-dtype",
       .help = "output type",
       .default_value = "f32",
       .kind = k::word,
       .choices = {"f32", "f16", "bf16"},
       .gpu_only = true},
      {.name = "impl",
       .help = "GPU implementation: staged (one kernel per op), fused (one pass) or all",
       .default_value = "all",
       .kind = k::word,
       .choices = {"staged", "fused", "all"},
       .gpu_only = true},
      {.name = "input",
       .help = "read the images from this directory (PNG/JPEG, resized to the batch shape) "
               "instead of synthesizing them",
       .kind = k::path},
      {.name = "save-samples",
       .help = "write the first images before and after augmentation as PNG into this "
               "directory",
       .kind = k::path},
  };
  return table;
}

augment_config augment_config_from_point(const point_view& point) {
  augment_config cfg;
  cfg.batch = point.get<int>("batch");
  cfg.height = point.get<int>(point.has("height") ? "height" : "size");
  cfg.width = point.get<int>(point.has("width") ? "width" : "size");
  cfg.channels = point.get<int>("channels");
  cfg.crop = point.get<int>("crop");
  cfg.resize = point.get<int>("resize");
  cfg.degrees = point.get<double>("degrees");
  cfg.interp = point.word<augment_interp>("interp", interp_words);
  cfg.blur = point.get<int>("blur");
  // LO:HI, checked when planned (finish_augment_point).
  std::tie(cfg.sigma_lo, cfg.sigma_hi) = parse_sigma(point.text("sigma"));
  // Through float, as the plan writes them: a point read back gives the numbers it ran with.
  for (const auto& [key, out] : {std::pair{"mean", &cfg.mean}, std::pair{"std", &cfg.stddev}}) {
    out->clear();
    for (const double x : point.numbers(key)) out->push_back(static_cast<float>(x));
  }
  cfg.out = point.word<dtype>("out-dtype", dtype_words);
  return cfg;
}

augment_config default_augment_config() {
  const json none = json::object();
  return augment_config_from_point(point_view(augment_param_table(), none));
}

} // namespace gpubench
