// `gpubench augment`: parameters and their validation, the plan, and one point's run (inputs, CPU
// reference, checked GPU runs, measurements, derived figures, sample pictures).
#include "gpubench/augment_bench.hpp"

#include "gpubench/augment_cpu.hpp"
#include "gpubench/augment_images.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/half.hpp"
#include "gpubench/host_buffer.hpp"
#include "gpubench/image_io.hpp"
#include "gpubench/report.hpp"
#include "gpubench/sizes.hpp"
#include "gpubench/untrusted_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <tuple>

namespace gpubench {

using nlohmann::json;

namespace {

constexpr std::uint64_t max_batch = 1U << 20U;
constexpr int max_size = 16384;
constexpr int max_resize = 8192;

// ---- parsing and validation (every message names the option) ---------------------------------

int int_option(const param_values& v, const char* name, std::uint64_t lo, std::uint64_t hi) {
  const auto x = parse_size(value_of(v, name), name);
  if (x < lo || x > hi)
    throw usage_error(fmt::format("--{}: {} is out of range ({} to {})", name, x, lo, hi));
  return static_cast<int>(x);
}

double number_option(const param_values& v, const char* name) {
  const auto xs = parse_number_list(value_of(v, name), name);
  if (xs.size() != 1)
    throw usage_error(
        fmt::format("--{}: expected one number, got '{}'", name, clip(value_of(v, name))));
  return xs[0];
}

std::string word_option(const param_values& v, const char* name,
                        std::initializer_list<const char*> allowed) {
  const std::string& w = value_of(v, name);
  std::string list;
  for (const char* a : allowed) {
    if (w == a) return w;
    list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
  }
  throw usage_error(fmt::format("--{}: '{}' is not one of {}", name, clip(w), list));
}

std::vector<float> per_channel(const param_values& v, const char* name, int channels,
                               bool positive) {
  const auto xs = parse_number_list(value_of(v, name), name);
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

std::pair<double, double> sigma_option(const param_values& v) {
  const std::string& text = value_of(v, "sigma");
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

/// Everything but the batch, validated; the batch list separately.
augment_config parse_config(const param_values& v) {
  augment_config cfg;
  const int size = int_option(v, "size", 1, max_size);
  cfg.height = value_of(v, "height").empty() ? size : int_option(v, "height", 1, max_size);
  cfg.width = value_of(v, "width").empty() ? size : int_option(v, "width", 1, max_size);
  if (static_cast<std::uint64_t>(cfg.height) * static_cast<std::uint64_t>(cfg.width) >
      max_image_pixels)
    throw usage_error(fmt::format("--height/--width: {}x{} is more than {} pixels", cfg.height,
                                  cfg.width, max_image_pixels));
  const auto channels = parse_size(value_of(v, "channels"), "channels");
  if (channels == 0) throw usage_error("--channels: 0 channels: an image needs at least 1");
  if (channels > static_cast<std::uint64_t>(augment_max_channels))
    throw usage_error(fmt::format("--channels: {} is more than the {} supported", channels,
                                  augment_max_channels));
  cfg.channels = static_cast<int>(channels);
  cfg.crop = int_option(v, "crop", 1, max_size);
  if (cfg.crop > cfg.height || cfg.crop > cfg.width)
    throw usage_error(
        fmt::format("--crop {} is larger than the image ({}x{})", cfg.crop, cfg.width, cfg.height));
  cfg.resize = int_option(v, "resize", 1, max_resize);
  cfg.degrees = number_option(v, "degrees");
  if (!(cfg.degrees >= 0 && cfg.degrees <= 180))
    throw usage_error(fmt::format("--degrees: {} is out of range (0 to 180)", cfg.degrees));
  (void)to_float32(cfg.degrees, "degrees"); // the kernels take it as float32
  cfg.interp = word_option(v, "interp", {"nearest", "bilinear"}) == "nearest"
                   ? augment_interp::nearest
                   : augment_interp::bilinear;
  const auto blur = parse_size(value_of(v, "blur"), "blur");
  if (blur == 0 || blur % 2 == 0 || blur > static_cast<std::uint64_t>(augment_max_blur))
    throw usage_error(
        fmt::format("--blur: {} is not an odd kernel size from 1 to {}", blur, augment_max_blur));
  cfg.blur = static_cast<int>(blur);
  if (cfg.blur / 2 >= cfg.resize)
    throw usage_error(fmt::format("--blur: a {}-tap kernel needs an output of at least {} pixels "
                                  "(--resize {})",
                                  cfg.blur, cfg.blur / 2 + 1, cfg.resize));
  std::tie(cfg.sigma_lo, cfg.sigma_hi) = sigma_option(v);
  cfg.mean = per_channel(v, "mean", cfg.channels, false);
  cfg.stddev = per_channel(v, "std", cfg.channels, true);
  cfg.out = *parse_dtype(word_option(v, "out-dtype", {"f32", "f16", "bf16"}));
  return cfg;
}

std::string interp_name(augment_interp i) {
  return i == augment_interp::nearest ? "nearest" : "bilinear";
}

json config_to_point(const augment_config& cfg) {
  return json{{"batch", cfg.batch},     {"height", cfg.height},
              {"width", cfg.width},     {"channels", cfg.channels},
              {"crop", cfg.crop},       {"resize", cfg.resize},
              {"degrees", cfg.degrees}, {"interp", interp_name(cfg.interp)},
              {"blur", cfg.blur},       {"sigma", fmt::format("{}:{}", cfg.sigma_lo, cfg.sigma_hi)},
              {"mean", cfg.mean},       {"std", cfg.stddev}};
}

struct impl_choice {
  bool staged = false;
  bool fused = false;
};

impl_choice impls_of(const json& point) {
  const std::string impl = point.value("impl", "all");
  return {impl != "fused", impl != "staged"};
}

std::size_t device_bytes_needed(const augment_shape& shape, impl_choice impl, int l2_bytes) {
  std::size_t n = static_cast<std::size_t>(shape.batch) * shape.channels * shape.input_pixels() +
                  static_cast<std::size_t>(shape.batch) * sizeof(augment_sample) +
                  static_cast<std::size_t>(std::max(l2_bytes, 0));
  if (impl.fused) n += cuda::augment_output_bytes(shape);
  if (impl.staged)
    n += cuda::augment_output_bytes(shape) + cuda::augment_staged_device_bytes(shape);
  return n;
}

/// A batch that cannot fit is a usage error (exit 2), said before anything is allocated.
void require_fit(const augment_shape& shape, impl_choice impl, int device) {
  const cuda::scoped_device guard(device);
  const int l2 = cuda::query_device(device).l2_bytes;
  const std::size_t need = device_bytes_needed(shape, impl, l2);
  try {
    cuda::require_device_memory(need, "augment");
  } catch (const cuda::out_of_memory_error&) {
    const auto info = cuda::device_memory_info();
    throw usage_error(fmt::format(
        "--batch {}: needs {:.3f} GB of device memory (input, outputs{}, L2 flush buffer) but "
        "device {} has only {:.3f} GB free (plus a 256 MB margin); use a smaller --batch",
        shape.batch, static_cast<double>(need) / 1e9, impl.staged ? ", staged intermediates" : "",
        device, static_cast<double>(info.free_bytes) / 1e9));
  }
}

std::vector<json> plan_augment(const param_values& v, const common_options& opts) {
  const auto batches = parse_size_list(value_of(v, "batch"), "batch");
  for (const auto b : batches)
    if (b == 0 || b > max_batch)
      throw usage_error(fmt::format("--batch: {} is out of range (1 to {})", b, max_batch));
  augment_config cfg = parse_config(v);
  const std::string impl = word_option(v, "impl", {"staged", "fused", "all"});
  const std::string& input = value_of(v, "input");
  if (!input.empty()) {
    if (cfg.channels > 4)
      throw usage_error(fmt::format("--channels: {} channels cannot be read from --input images "
                                    "(1 to 4)",
                                    cfg.channels));
    for (const auto& f : list_image_files(input, "input")) probe_image(f, "input");
  }
  const std::string& samples = value_of(v, "save-samples");
  if (!samples.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(samples);
    if (fs::exists(p, ec) ? !fs::is_directory(p, ec)
                          : !fs::is_directory(p.has_parent_path() ? p.parent_path() : ".", ec))
      throw usage_error(fmt::format("--save-samples: '{}' is not a directory, nor can it be "
                                    "created (its parent does not exist)",
                                    samples));
  }
  std::vector<json> points;
  for (const auto b : batches) {
    cfg.batch = static_cast<int>(b);
    json p = config_to_point(cfg);
    if (!opts.cpu_only) {
      p["out-dtype"] = std::string(dtype_name(cfg.out));
      p["impl"] = impl;
      // Fail before anything runs when a device is there to ask.
      if (cuda::device_count_or_zero() > 0)
        for (const int d : opts.devices)
          if (d >= 0 && d < cuda::device_count_or_zero())
            require_fit(make_augment_shape(cfg), impls_of(p), d);
    }
    if (!input.empty()) p["input"] = input;
    if (!samples.empty()) p["save-samples"] = samples;
    points.push_back(std::move(p));
  }
  return points;
}

// ---- one point ------------------------------------------------------------------------------

float output_as_float(dtype t, const std::byte* p, std::size_t i) {
  std::uint16_t h = 0;
  switch (t) {
  case dtype::f16: std::memcpy(&h, p + 2 * i, 2); return half_to_float(h);
  case dtype::bf16: std::memcpy(&h, p + 2 * i, 2); return bf16_to_float(h);
  case dtype::f32:
  case dtype::f64: break;
  }
  float f = 0;
  std::memcpy(&f, p + 4 * i, 4);
  return f;
}

void derive(result& r, int batch) {
  const auto ratio = [&](const char* key, const char* num, const char* den) {
    const auto* x = r.find(num);
    const auto* y = r.find(den);
    if (x != nullptr && y != nullptr && y->median() > 0) r.derived[key] = x->median() / y->median();
  };
  const auto with_upload = [&](const char* key, const char* impl) {
    const auto* cpu = r.find("cpu_reference");
    const auto* h2d = r.find("h2d");
    const auto* m = r.find(impl);
    if (cpu != nullptr && h2d != nullptr && m != nullptr)
      r.derived[key] = cpu->median() / (h2d->median() + m->median());
  };
  for (const char* name : {"cpu_reference", "staged", "fused"})
    if (const auto* m = r.find(name); m != nullptr && m->median() > 0)
      r.derived[fmt::format("{}_images_per_s", name)] = batch / m->median();
  if (const auto* h2d = r.find("h2d"); h2d != nullptr)
    if (const auto* f = r.find("fused"); f != nullptr)
      r.derived["fused_with_upload_images_per_s"] = batch / (h2d->median() + f->median());
  ratio("speedup_fused_vs_staged", "staged", "fused");
  ratio("speedup_fused_vs_cpu_reference", "cpu_reference", "fused");
  ratio("speedup_staged_vs_cpu_reference", "cpu_reference", "staged");
  with_upload("speedup_fused_with_upload_vs_cpu_reference", "fused");
  with_upload("speedup_staged_with_upload_vs_cpu_reference", "staged");
}

result run_augment_point(const json& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const augment_config cfg = augment_config_from_point(point);
  const augment_shape shape = make_augment_shape(cfg);
  const impl_choice impl = impls_of(point);
  const std::string input_dir = point.value("input", "");
  const std::string samples_dir = point.value("save-samples", "");
  const auto batch = static_cast<std::size_t>(cfg.batch);
  const std::size_t in_bytes = batch * cfg.channels * shape.input_pixels();
  const std::size_t out_n = batch * cfg.channels * shape.output_pixels();
  const std::string label = fmt::format("augment batch {}", cfg.batch);
  auto& pool = ctx.cpu_pool();

  result r;
  r.params = point;
  require_host_memory(
      in_bytes + out_n * sizeof(float) + (opts.cpu_only ? 0 : out_n * dtype_size(cfg.out)), label);
  host_buffer input(in_bytes, opts.cpu_only ? host_memory::pageable : host_memory::pinned);
  if (input_dir.empty())
    fill_synthetic_images(input.as<std::uint8_t>(), cfg, opts.seed, cfg.batch, pool);
  else
    load_input_images(input.as<std::uint8_t>(), cfg, input_dir, cfg.batch);
  const auto samples = draw_augment_samples(cfg, opts.seed, 0, cfg.batch);
  std::vector<float> ref(out_n);
  const auto reference = [&] {
    augment_cpu::augment_batch(input.as<std::uint8_t>(), shape, samples, ref.data(), pool);
  };
  const double images = static_cast<double>(batch);
  // The CPU reference's least traffic: the crop regions in, float32 outputs out.
  const double cpu_bytes =
      static_cast<double>(batch * cfg.channels) *
      (static_cast<double>(cfg.crop) * cfg.crop + 4.0 * static_cast<double>(shape.output_pixels()));
  const work_counts cpu_work{cpu_bytes, images, "images"};
  reference(); // the result that GPU outputs are checked against, also when not timed
  const auto save = [&](const float* after) {
    if (samples_dir.empty()) return;
    const auto paths = save_augment_samples(samples_dir, cfg, input.as<std::uint8_t>(), after,
                                            std::min(cfg.batch, saved_samples));
    ctx.log("augment: wrote {} sample pictures to {}", paths.size(), samples_dir);
  };
  if (opts.cpu_only) {
    if (!interrupt_requested())
      r.measurements.push_back(measure_host("cpu_reference", opts.measure, cpu_work, reference));
    derive(r, cfg.batch);
    save(ref.data());
    return r;
  }

  const int device = point_device(point);
  require_fit(shape, impl, device);
  const cuda::scoped_device guard(device);
  const device_record& dev = ctx.device_with_peaks(device);
  const cuda::stream main_stream;
  const cudaStream_t s = main_stream.get();
  cuda::l2_flusher flusher(dev.info.l2_bytes);
  gpu_sampler sampler(s, &flusher);

  cuda::device_buffer<std::uint8_t> d_input(in_bytes);
  cuda::device_buffer<augment_sample> d_samples(batch);
  const std::size_t out_bytes = cuda::augment_output_bytes(shape);
  cuda::device_buffer<std::byte> d_fused(impl.fused ? out_bytes : 0);
  cuda::device_buffer<std::byte> d_staged(impl.staged ? out_bytes : 0);
  const std::size_t images_c = batch * cfg.channels;
  const std::size_t crop_px =
      static_cast<std::size_t>(cfg.crop) * static_cast<std::size_t>(cfg.crop);
  cuda::device_buffer<float> full(impl.staged ? images_c * shape.input_pixels() : 0);
  cuda::device_buffer<float> cropped(impl.staged ? images_c * crop_px : 0);
  cuda::device_buffer<float> resized(impl.staged ? out_n : 0);
  cuda::device_buffer<float> rotated(impl.staged ? out_n : 0);
  cuda::device_buffer<float> blurred(impl.staged ? out_n : 0);
  const cuda::augment_staged_buffers buffers{full.data(), cropped.data(), resized.data(),
                                             rotated.data(), blurred.data()};
  GPUBENCH_CUDA_TRY(cudaMemcpyAsync(d_samples.data(), samples.data(),
                                    batch * sizeof(augment_sample), cudaMemcpyHostToDevice, s));
  const auto upload = [&](cudaStream_t st) {
    GPUBENCH_CUDA_TRY(
        cudaMemcpyAsync(d_input.data(), input.data(), in_bytes, cudaMemcpyHostToDevice, st));
  };
  upload(s);
  const auto staged = [&](cudaStream_t st) {
    cuda::launch_augment_staged(shape, d_input.data(), d_samples.data(), buffers, d_staged.data(),
                                st);
  };
  const auto fused = [&](cudaStream_t st) {
    cuda::launch_augment_fused(shape, d_input.data(), d_samples.data(), d_fused.data(), st);
  };

  // Checked runs: outputs (and the staged intermediates) poisoned with all-ones bytes (NaN in
  // every float type) first, so an element a kernel fails to write cannot pass.
  std::vector<std::byte> got(out_bytes);
  std::vector<float> shown;
  const auto checked = [&](const char* name, const std::function<void(cudaStream_t)>& body,
                           std::byte* out) {
    GPUBENCH_CUDA_TRY(cudaMemsetAsync(out, 0xFF, out_bytes, s));
    for (auto* b : {&full, &cropped, &resized, &rotated, &blurred})
      if (b->size() > 0) GPUBENCH_CUDA_TRY(cudaMemsetAsync(b->data(), 0xFF, b->bytes(), s));
    body(s);
    GPUBENCH_CUDA_TRY(cudaMemcpyAsync(got.data(), out, out_bytes, cudaMemcpyDeviceToHost, s));
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(s));
    r.verify.merge(augment_cpu::check_output(shape, ref.data(), got.data(), pool), name);
  };
  if (opts.verify) {
    if (impl.staged) checked("staged", staged, d_staged.data());
    if (impl.fused) checked("fused", fused, d_fused.data());
    if (!r.verify.passed) {
      r.status = result_status::failed;
      r.reason = "GPU output differs from the CPU reference";
    }
  }
  if (!samples_dir.empty()) {
    // Show what the GPU produced (fused when it ran).
    std::byte* out = impl.fused ? d_fused.data() : d_staged.data();
    if (!opts.verify) {
      if (impl.fused)
        fused(s);
      else
        staged(s);
    }
    const std::size_t per_image = static_cast<std::size_t>(cfg.channels) * shape.output_pixels();
    const std::size_t n = std::min<std::size_t>(batch, saved_samples) * per_image;
    std::vector<std::byte> host(n * dtype_size(cfg.out));
    GPUBENCH_CUDA_TRY(cudaMemcpyAsync(host.data(), out, host.size(), cudaMemcpyDeviceToHost, s));
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(s));
    shown.resize(n);
    for (std::size_t i = 0; i < n; ++i) shown[i] = output_as_float(cfg.out, host.data(), i);
    save(shown.data());
  }

  const auto measure = [&](const char* name, double bytes,
                           const std::function<void(cudaStream_t)>& body) {
    if (interrupt_requested()) return;
    r.measurements.push_back(sampler.run(name, opts.measure, {bytes, images, "images"}, body));
    if (std::string_view(name) != "h2d") add_peak_fractions(r.measurements.back(), dev);
  };
  if (!interrupt_requested())
    r.measurements.push_back(measure_host("cpu_reference", opts.measure, cpu_work, reference));
  if (impl.staged) measure("staged", cuda::augment_staged_bytes(shape).total(), staged);
  if (impl.fused) measure("fused", cuda::augment_fused_bytes(shape), fused);
  measure("h2d", static_cast<double>(in_bytes), upload);
  derive(r, cfg.batch);
  return r;
}

void write_summary(std::ostream& os, const std::vector<const result*>& results) {
  const auto rate_of = [](const result& r, const char* name) -> std::string {
    const auto it = r.derived.find(fmt::format("{}_images_per_s", name));
    return it == r.derived.end() ? "" : format_rate(it->get<double>(), "images");
  };
  const auto speedup = [](const result& r, const char* key) -> std::string {
    const auto it = r.derived.find(key);
    return it == r.derived.end() ? "" : fmt::format("{:.2f}x", it->get<double>());
  };
  os << "augment summary (images/s from the median; speedups compare medians)\n";
  os << fmt::format("  {:>7} {:>20} {:>20} {:>20} {:>15} {:>15} {:>15}  {}\n", "batch",
                    "cpu_reference", "staged", "fused", "fused/staged", "fused/cpu",
                    "fused+h2d/cpu", "verification");
  for (const result* r : results) {
    if (r->status == result_status::skipped || r->status == result_status::error) continue;
    os << fmt::format(
        "  {:>7} {:>20} {:>20} {:>20} {:>15} {:>15} {:>15}  {}\n", r->params.value("batch", 0),
        rate_of(*r, "cpu_reference"), rate_of(*r, "staged"), rate_of(*r, "fused"),
        speedup(*r, "speedup_fused_vs_staged"), speedup(*r, "speedup_fused_vs_cpu_reference"),
        speedup(*r, "speedup_fused_with_upload_vs_cpu_reference"),
        !r->verify.performed ? "not performed"
        : r->verify.passed   ? "passed"
                             : "FAILED");
  }
  os << "\n";
}

} // namespace

augment_config augment_config_from_point(const json& point) {
  augment_config cfg;
  cfg.batch = point.at("batch").get<int>();
  cfg.height = point.at("height").get<int>();
  cfg.width = point.at("width").get<int>();
  cfg.channels = point.at("channels").get<int>();
  cfg.crop = point.at("crop").get<int>();
  cfg.resize = point.at("resize").get<int>();
  cfg.degrees = point.at("degrees").get<double>();
  cfg.interp =
      point.at("interp") == "bilinear" ? augment_interp::bilinear : augment_interp::nearest;
  cfg.blur = point.at("blur").get<int>();
  const std::string sigma = point.at("sigma").get<std::string>();
  const auto colon = sigma.find(':');
  cfg.sigma_lo = parse_number(sigma.substr(0, colon), "sigma");
  cfg.sigma_hi = parse_number(sigma.substr(colon + 1), "sigma");
  cfg.mean = point.at("mean").get<std::vector<float>>();
  cfg.stddev = point.at("std").get<std::vector<float>>();
  cfg.out = parse_dtype(point.value("out-dtype", "f32")).value_or(dtype::f32);
  return cfg;
}

benchmark make_augment_benchmark() {
  benchmark b;
  b.name = "augment";
  b.summary = "image augmentation (crop, resize, rotate, blur, normalize): CPU vs GPU staged vs "
              "GPU fused";
  b.examples =
      "Examples:\n"
      "  gpubench augment\n"
      "  gpubench augment --batch 32,256 --impl all\n"
      "  gpubench augment --batch 32:256:x2 --out-dtype f16 --format json --output a.json\n"
      "  gpubench augment --input photos/ --save-samples out/ --batch 8\n"
      "  gpubench augment --size 512 --crop 224 --resize 224 --degrees 10 --interp bilinear\n"
      "  gpubench augment --mean 123.7,116.3,103.5 --std 58.4,57.1,57.4 --cpu-only\n";
  b.params = {
      {"batch", "images per batch: 32, lists 32,128,256, ranges 32:256:x2", "32", true},
      {"size", "input image side (height and width)", "256", false},
      {"height", "input image height (default: --size)", "", false},
      {"width", "input image width (default: --size)", "", false},
      {"channels", "channels per image (1 to 16; 1 to 4 with --input)", "3", false},
      {"crop", "side of the random square crop", "128", false},
      {"resize", "side the crop is resized to (bilinear, half-pixel centres)", "256", false},
      {"degrees", "rotation angle drawn uniformly in [-D, +D] degrees, counter-clockwise", "45",
       false},
      {"interp", "rotation sampling: nearest or bilinear", "nearest", false},
      {"blur", "gaussian kernel size: odd, 1 to 31", "7", false},
      {"sigma", "blur sigma drawn uniformly in LO:HI per image (or one value)", "0.1:2.0", false},
      {"mean", "normalize: subtracted, one value or one per channel", "0", false},
      {"std", "normalize: divided by, one value or one per channel (positive)", "1", false},
      {"out-dtype", "output type: f32, f16 or bf16", "f32", false},
      {"impl", "GPU implementation: staged (one kernel per op), fused (one pass) or all", "all",
       false},
      {"input",
       "read the images from this directory (PNG/JPEG, resized to the batch shape) "
       "instead of synthesizing them",
       "", false},
      {"save-samples",
       "write the first images before and after augmentation as PNG into this "
       "directory",
       "", false},
  };
  b.plan = plan_augment;
  b.run_point = run_augment_point;
  b.summary_table = write_summary;
  return b;
}

} // namespace gpubench
