// `gpubench augment`: the plan's checks and one point's run (inputs, CPU reference, checked GPU
// runs, measurements, derived figures, sample pictures). The parameter table and its validation
// are in augment_options.cpp.
#include "gpubench/augment/augment_bench.hpp"

#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_images.hpp"
#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/augment/image_io.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/half.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/host_buffer.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <ostream>
#include <tuple>

namespace gpubench {

using nlohmann::json;

namespace {

struct impl_choice {
  bool staged = false;
  bool fused = false;
};

constexpr std::array<word_choice<impl_choice>, 3> impl_words{
    {{"staged", {true, false}}, {"fused", {false, true}}, {"all", {true, true}}}};

/// The GPU implementations a point runs (a --cpu-only point, which has no impl, reads the
/// table's default and runs none of them).
impl_choice impls_of(const point_view& point) {
  return point.word<impl_choice>("impl", impl_words);
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

/// A batch that cannot fit throws out_of_memory_error with what it needs, before allocating.
void require_fit(const augment_shape& shape, impl_choice impl, int device) {
  const cuda::scoped_device guard(device);
  const int l2 = cuda::query_device(device).l2_bytes;
  const std::size_t need = device_bytes_needed(shape, impl, l2);
  try {
    cuda::require_device_memory(need, "augment");
  } catch (const cuda::out_of_memory_error&) {
    // A point that does not fit is skipped with this reason and the sweep goes on (the runner's
    // error policy), as vecadd's are: a large batch must not cost the small ones before it.
    const auto info = cuda::device_memory_info();
    throw cuda::out_of_memory_error(
        cudaErrorMemoryAllocation,
        fmt::format(
            "--batch {}: needs {:.3f} GB of device memory (input, outputs{}, L2 flush buffer) but "
            "device {} has only {:.3f} GB free (plus a 256 MB margin); use a smaller --batch",
            shape.batch, static_cast<double>(need) / 1e9,
            impl.staged ? ", staged intermediates" : "", device,
            static_cast<double>(info.free_bytes) / 1e9));
  }
}

/// Images from --input must be readable and --save-samples must be a directory before anything
/// runs; a batch that cannot fit is skipped when its point runs (require_fit), not refused here.
void check_augment_plan(const std::vector<json>& /*points*/, const json& all,
                        const param_values& /*text*/, const common_options& /*opts*/) {
  const std::string input = all.value("input", "");
  if (!input.empty()) {
    if (all.at("channels").get<int>() > 4)
      throw usage_error(fmt::format("--channels: {} channels cannot be read from --input images "
                                    "(1 to 4)",
                                    all.at("channels").get<int>()));
    for (const auto& f : list_image_files(input, "input")) probe_image(f, "input");
  }
  const std::string samples = all.value("save-samples", "");
  if (!samples.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // "out/" names the folder out (its parent is the current folder), not an empty name in out.
    fs::path p(samples);
    while (p.has_relative_path() && p.filename().empty()) p = p.parent_path();
    if (fs::exists(p, ec)) {
      if (!fs::is_directory(p, ec))
        throw usage_error(fmt::format("--save-samples: '{}' exists and is not a directory; "
                                      "name a folder (it is created if its parent exists)",
                                      clip(samples, 200)));
    } else if (!fs::is_directory(p.has_parent_path() ? p.parent_path() : ".", ec)) {
      throw usage_error(fmt::format("--save-samples: '{}' is not a directory, nor can it be "
                                    "created (its parent does not exist)",
                                    clip(samples, 200)));
    }
    // Create it and write a file there now, as --output is checked: a folder that cannot take the
    // pictures must not be found only after the measurement.
    check_samples_folder(samples);
  }
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

/// The CPU rows, in the order the summary names them.
constexpr const char* cpu_rows[] = {"cpu_reference", "cpu_opencv"};

/// The CPU row with the highest rate (the lowest median), or nullptr when none was measured.
const char* fastest_cpu_row(const result& r) {
  const char* best = nullptr;
  double best_time = 0;
  for (const char* name : cpu_rows)
    if (const auto* m = r.find(name); m != nullptr && m->median() > 0)
      if (best == nullptr || m->median() < best_time) {
        best = name;
        best_time = m->median();
      }
  return best;
}

void derive(result& r, int batch) {
  const auto with_upload = [&](const std::string& key, const char* cpu_row, const char* impl) {
    const auto* cpu = r.find(cpu_row);
    const auto* h2d = r.find("h2d");
    const auto* m = r.find(impl);
    if (cpu != nullptr && h2d != nullptr && m != nullptr)
      r.derived[key] = cpu->median() / (h2d->median() + m->median());
  };
  for (const char* name : {"cpu_reference", "cpu_opencv", "staged", "fused"})
    if (const auto* m = r.find(name); m != nullptr && m->median() > 0)
      r.derived[fmt::format("{}_images_per_s", name)] = batch / m->median();
  if (const auto* h2d = r.find("h2d"); h2d != nullptr)
    if (const auto* f = r.find("fused"); f != nullptr)
      r.derived["fused_with_upload_images_per_s"] = batch / (h2d->median() + f->median());
  for (const char* cpu : cpu_rows) {
    with_upload(fmt::format("speedup_fused_with_upload_vs_{}", cpu), cpu, "fused");
    with_upload(fmt::format("speedup_staged_with_upload_vs_{}", cpu), cpu, "staged");
  }
  // Speedups are quoted against the fastest CPU row; the result names it.
  if (const char* fastest = fastest_cpu_row(r); fastest != nullptr)
    r.derived["fastest_cpu"] = fastest;
}

/// One point's host side: the configuration, the input batch (synthetic or loaded), the drawn
/// parameters, the CPU reference's output (what GPU outputs are checked against) and the CPU rows.
class augment_host {
public:
  augment_host(const point_view& point, run_context& ctx)
      : opts_(ctx.options()), ctx_(ctx), pool_(ctx.cpu_pool()),
        cfg(augment_config_from_point(point)), shape(make_augment_shape(cfg)),
        batch(static_cast<std::size_t>(cfg.batch)),
        in_bytes(batch * cfg.channels * shape.input_pixels()),
        out_n(batch * cfg.channels * shape.output_pixels()), input(make_input()),
        samples(draw_augment_samples(cfg, opts_.seed, 0, cfg.batch)), ref(out_n),
        samples_dir_(point.text("save-samples")), cv_out_(with_opencv_ ? out_n : 0) {
    if (const std::string dir = point.text("input"); dir.empty())
      fill_synthetic_images(input.as<std::uint8_t>(), cfg, opts_.seed, cfg.batch, pool_);
    else
      load_input_images(input.as<std::uint8_t>(), cfg, dir, cfg.batch);
    reference(); // the result GPU outputs are checked against, also when not timed
  }

  const common_options& opts() const { return opts_; }
  thread_pool& pool() { return pool_; }
  [[nodiscard]] bool saving() const { return !samples_dir_.empty(); }

  /// Pictures of the first images before and after (`after`: output floats), when asked for.
  void save(const float* after) {
    if (samples_dir_.empty()) return;
    const auto paths = save_augment_samples(samples_dir_, cfg, input.as<std::uint8_t>(), after,
                                            std::min(cfg.batch, saved_samples));
    ctx_.log("augment: wrote {} sample pictures to {}", paths.size(), samples_dir_);
  }

  /// The OpenCV baseline's output (augment_opencv.hpp, the same parameters) checked against the
  /// float reference once, poisoned first (NaN) so that an element it fails to write fails.
  void check_opencv(result& r) {
    if (!with_opencv_) r.derived["cpu_opencv_absent"] = augment_opencv::absence_reason();
    if (!with_opencv_ || !opts_.verify) return;
    std::fill(cv_out_.begin(), cv_out_.end(), std::numeric_limits<float>::quiet_NaN());
    opencv();
    r.verify.merge(augment_opencv::check_output(shape, ref.data(), cv_out_.data(), pool_),
                   "cpu_opencv");
  }

  /// The CPU rows, described and with their RAPL energy under --energy.
  void measure_cpu_rows(result& r) {
    if (interrupt_requested()) return;
    const double images = static_cast<double>(batch);
    // The CPU reference's least traffic: the crop regions in, float32 outputs out.
    const double cpu_bytes = static_cast<double>(batch * cfg.channels) *
                             (static_cast<double>(cfg.crop) * cfg.crop +
                              4.0 * static_cast<double>(shape.output_pixels()));
    const work_counts cpu_work{cpu_bytes, images, "images"};
    const auto reference_fn = [this] { reference(); };
    auto m = measure_host("cpu_reference", opts_.measure, cpu_work, reference_fn);
    m.description = fmt::format(
        "{} threads, one range of images each; float32 per-op passes (crop, resize, rotate, "
        "separable blur, normalize) the compiler vectorizes (-O3, baseline ISA, no -march=native, "
        "no FMA "
        "contraction)",
        pool_.size());
    add_cpu_energy(m, opts_, reference_fn, images, "image");
    r.measurements.push_back(std::move(m));
    if (!with_opencv_ || interrupt_requested()) return;
    const auto opencv_fn = [this] { opencv(); };
    auto o = measure_host("cpu_opencv", opts_.measure, cpu_work, opencv_fn);
    o.description = augment_opencv::row_description(pool_.size());
    add_cpu_energy(o, opts_, opencv_fn, images, "image");
    r.measurements.push_back(std::move(o));
  }

private:
  const common_options& opts_;
  run_context& ctx_;
  thread_pool& pool_;
  bool with_opencv_ = augment_opencv::built_in();

public:
  const augment_config cfg;
  const augment_shape shape;
  const std::size_t batch;
  const std::size_t in_bytes;
  const std::size_t out_n;
  host_buffer input;
  std::vector<augment_sample> samples;
  std::vector<float> ref;

private:
  std::string samples_dir_;
  std::vector<float> cv_out_;
  /// The input batch, once the host is known to have what the point takes.
  host_buffer make_input() const {
    require_host_memory(in_bytes + out_n * sizeof(float) * (with_opencv_ ? 2 : 1) +
                            (opts_.cpu_only ? 0 : out_n * dtype_size(cfg.out)),
                        fmt::format("augment batch {}", cfg.batch));
    return {in_bytes, opts_.cpu_only ? host_memory::pageable : host_memory::pinned};
  }
  void reference() {
    augment_cpu::augment_batch(input.as<std::uint8_t>(), shape, samples, ref.data(), pool_);
  }
  void opencv() {
    augment_opencv::augment_batch(input.as<std::uint8_t>(), shape, samples, cv_out_.data(), pool_);
  }
};

/// One point's GPU side: the input and parameters on the device, the outputs of the
/// implementations asked for and the staged path's intermediates.
class augment_gpu {
public:
  augment_gpu(augment_host& host, const impl_choice& impl, cudaStream_t s)
      : h_(host), impl_(impl), s_(s), d_input_(host.in_bytes), d_samples_(host.batch),
        out_bytes_(cuda::augment_output_bytes(host.shape)), d_fused_(impl.fused ? out_bytes_ : 0),
        d_staged_(impl.staged ? out_bytes_ : 0),
        full_(impl.staged ? host.batch * host.cfg.channels * host.shape.input_pixels() : 0),
        cropped_(impl.staged
                     ? host.batch * host.cfg.channels * static_cast<std::size_t>(host.cfg.crop) *
                           static_cast<std::size_t>(host.cfg.crop)
                     : 0),
        resized_(impl.staged ? host.out_n : 0), rotated_(impl.staged ? host.out_n : 0),
        blurred_(impl.staged ? host.out_n : 0) {
    cuda::copy_to_device_async(d_samples_.data(), host.samples.data(),
                               host.batch * sizeof(augment_sample), s);
    upload(s);
  }

  void upload(cudaStream_t st) {
    cuda::copy_to_device_async(d_input_.data(), h_.input.data(), h_.in_bytes, st);
  }
  void staged(cudaStream_t st) {
    const cuda::augment_staged_buffers buffers{full_.data(), cropped_.data(), resized_.data(),
                                               rotated_.data(), blurred_.data()};
    cuda::launch_augment_staged(h_.shape, d_input_.data(), d_samples_.data(), buffers,
                                d_staged_.data(), st);
  }
  void fused(cudaStream_t st) {
    cuda::launch_augment_fused(h_.shape, d_input_.data(), d_samples_.data(), d_fused_.data(), st);
  }

  /// Checked runs: outputs (and the staged intermediates) poisoned with all-ones bytes (NaN in
  /// every float type) first, so an element a kernel fails to write cannot pass.
  void verify(result& r) {
    if (impl_.staged)
      checked(
          r, "staged", [this](cudaStream_t st) { staged(st); }, d_staged_);
    if (impl_.fused)
      checked(
          r, "fused", [this](cudaStream_t st) { fused(st); }, d_fused_);
  }

  /// Pictures of what the GPU produced (fused when it ran).
  void save_samples() {
    const std::byte* out = impl_.fused ? d_fused_.data() : d_staged_.data();
    if (!h_.opts().verify) {
      if (impl_.fused)
        fused(s_);
      else
        staged(s_);
    }
    const std::size_t per_image =
        static_cast<std::size_t>(h_.cfg.channels) * h_.shape.output_pixels();
    const std::size_t n = std::min<std::size_t>(h_.batch, saved_samples) * per_image;
    std::vector<std::byte> host(n * dtype_size(h_.cfg.out));
    cuda::copy_to_host_async(host.data(), out, host.size(), s_);
    cuda::synchronize(s_);
    std::vector<float> shown(n);
    for (std::size_t i = 0; i < n; ++i) shown[i] = output_as_float(h_.cfg.out, host.data(), i);
    h_.save(shown.data());
  }

private:
  augment_host& h_;
  impl_choice impl_;
  cudaStream_t s_;
  cuda::device_buffer<std::uint8_t> d_input_;
  cuda::device_buffer<augment_sample> d_samples_;
  std::size_t out_bytes_;
  cuda::device_buffer<std::byte> d_fused_;
  cuda::device_buffer<std::byte> d_staged_;
  cuda::device_buffer<float> full_;
  cuda::device_buffer<float> cropped_;
  cuda::device_buffer<float> resized_;
  cuda::device_buffer<float> rotated_;
  cuda::device_buffer<float> blurred_;

  void checked(result& r, const char* name, const std::function<void(cudaStream_t)>& body,
               cuda::device_buffer<std::byte>& out) {
    std::vector<std::byte> got(out_bytes_);
    std::vector<poison_target> poisoned{{out.data(), out_bytes_, true}};
    for (auto* b : {&full_, &cropped_, &resized_, &rotated_, &blurred_})
      poisoned.push_back({b->data(), b->bytes(), true});
    const auto outcome = checked_run(
        s_, poisoned,
        [&](cudaStream_t st) {
          body(st);
          cuda::copy_to_host_async(got.data(), out.data(), out_bytes_, st);
        },
        [&] { return augment_cpu::check_output(h_.shape, h_.ref.data(), got.data(), h_.pool()); });
    r.verify.merge(outcome, name);
  }
};

result run_augment_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const impl_choice impl = impls_of(point);
  result r;
  r.params = point.values();
  // The device first: a batch too large for the GPU is reported as that (the point is skipped
  // with what it needs), not as the host memory the same batch would also lack.
  if (!opts.cpu_only)
    require_fit(make_augment_shape(augment_config_from_point(point)), impl, point.device());
  augment_host host(point, ctx);
  if (opts.cpu_only) {
    host.check_opencv(r);
    host.measure_cpu_rows(r);
    derive(r, host.cfg.batch);
    host.save(host.ref.data());
    return r;
  }

  const int device = point.device();
  const cuda::scoped_device guard(device);
  gpu_setup gpu(ctx.device_with_peaks(device), ctx.telemetry(device));
  augment_gpu dev(host, impl, gpu.stream.get());
  if (opts.verify) dev.verify(r);
  host.check_opencv(r);
  if (host.saving()) dev.save_samples();

  const double images = static_cast<double>(host.batch);
  // The pixel arithmetic both implementations do, op by op; f32 multiply-adds on the CUDA cores.
  const auto flops = cuda::augment_flops(host.shape);
  const double f32_rate = cuda::flops_per_clock_per_sm(dtype::f32, gpu.dev.info, true);
  r.derived["flops_resize"] = flops.resize;
  r.derived["flops_rotate"] = flops.rotate;
  r.derived["flops_blur"] = flops.blur;
  r.derived["flops_normalize"] = flops.normalize;
  const auto measure = [&](const char* name, double bytes,
                           const std::function<void(cudaStream_t)>& body) {
    // A kernel row: its FLOPs, energy per image and extra rows; the upload alone.
    const bool kernel = std::string_view(name) != "h2d";
    work_counts work{bytes, images, "images"};
    if (kernel) {
      work.flops = flops.total();
      work.flops_per_clock_per_sm = f32_rate;
    }
    gpu_row row = plain_gpu_row(name, work, body);
    row.energy = row.extra_rows = kernel;
    measure_row(r, gpu.sampler, opts, row);
  };
  host.measure_cpu_rows(r);
  if (impl.staged)
    measure("staged", cuda::augment_staged_bytes(host.shape).total(),
            [&dev](cudaStream_t st) { dev.staged(st); });
  if (impl.fused)
    measure("fused", cuda::augment_fused_bytes(host.shape),
            [&dev](cudaStream_t st) { dev.fused(st); });
  measure("h2d", static_cast<double>(host.in_bytes), [&dev](cudaStream_t st) { dev.upload(st); });
  derive(r, host.cfg.batch);
  return r;
}

} // namespace

constexpr const char* augment_examples =
    "Examples:\n"
    "  gpubench augment\n"
    "  gpubench augment --batch 32,256 --impl all\n"
    "  gpubench augment --batch 32:256:x2 --out-dtype f16 --format json --output a.json\n"
    "  gpubench augment --input photos/ --save-samples out/ --batch 8\n"
    "  gpubench augment --size 512 --crop 224 --resize 224 --degrees 10 --interp bilinear\n"
    "  gpubench augment --mean 123.7,116.3,103.5 --std 58.4,57.1,57.4 --cpu-only\n";

benchmark make_augment_benchmark() {
  benchmark b("augment",
              "image augmentation (crop, resize, rotate, blur, normalize): CPU vs GPU staged vs "
              "GPU fused",
              augment_examples);
  b.params = augment_param_table();
  b.run_point = run_augment_point;
  b.finish_point = finish_augment_point;
  b.check_plan = check_augment_plan;
  b.device_bytes = [](const point_view& point) {
    return device_bytes_needed(make_augment_shape(augment_config_from_point(point)),
                               impls_of(point), 0);
  };
  b.after_point.ratios = {
      {"speedup_fused_vs_staged", "staged", "fused"},
      {"speedup_fused_vs_cpu_reference", "cpu_reference", "fused"},
      {"speedup_staged_vs_cpu_reference", "cpu_reference", "staged"},
      {"speedup_fused_vs_cpu_opencv", "cpu_opencv", "fused"},
      {"speedup_staged_vs_cpu_opencv", "cpu_opencv", "staged"},
      {"speedup_cpu_opencv_vs_cpu_reference", "cpu_reference", "cpu_opencv"},
  };
  b.after_point.peak_fraction_of = {"staged", "fused", "staged (batch)", "fused (batch)"};
  b.after_point.verify_failure =
      "an output differs from the CPU reference (verification.details names which)";
  b.summary_table = write_augment_summary;
  complete_declaration(b);
  return b;
}

} // namespace gpubench
