#include "gpubench/roofline/roofline_bench.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/roofline.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream_kernels.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/host_buffer.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/roofline/roofline_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

namespace gpubench {

using nlohmann::json;

namespace {

/// The SM clock the kernel row ran at (MHz): as the row's roof takes it (counted_sm_clock_mhz),
/// else the device's highest.
double clock_mhz(const measurement& m, int device) {
  if (const double mhz = counted_sm_clock_mhz(m); mhz > 0) return mhz;
  return cuda::max_sm_clock_khz(device) / 1e3;
}

/// The theoretical roofs of the point, and where its rate sits under them: the roof at its
/// intensity is the lower of the compute peak and intensity x the bandwidth peak.
void add_roofs(result& r, dtype t, const roofline_work& w, const cuda::device_info& info,
               int device) {
  const auto* m = r.find("kernel");
  if (m == nullptr || m->stats.median <= 0) return;
  const double bandwidth = info.peak_bytes_per_s();
  r.derived["theoretical_bytes_per_s"] = bandwidth;
  const auto per_clock = cuda::cuda_core_flops_per_clock_per_sm(t, info.cc_major, info.cc_minor);
  if (!per_clock) {
    r.derived["theoretical_flops_per_s"] =
        fmt::format("not known for compute capability {}.{}", info.cc_major, info.cc_minor);
    return;
  }
  const double mhz = clock_mhz(*m, device);
  const double compute = *per_clock * info.sms * mhz * 1e6;
  const double roof = std::min(compute, w.intensity * bandwidth);
  r.derived["theoretical_flops_per_s"] = compute;
  r.derived["theoretical_clock_mhz"] = mhz;
  r.derived["roof_flops_per_s"] = roof;
  r.derived["fraction_of_roof"] = w.flops / m->stats.median / roof;
  r.derived["theoretical_ridge_flops_per_byte"] = compute / bandwidth;
}

/// The blocks of `--grid`: a count as given, `device` fills every SM once with resident blocks
/// (each thread loops), `vectors` gives every thread one 16-byte vector (at most 2^20 blocks).
int grid_blocks(const word_or_count& grid, dtype t, std::size_t bytes, int block) {
  if (const auto* blocks = std::get_if<std::int64_t>(&grid)) return static_cast<int>(*blocks);
  if (std::get<std::string>(grid) == "device") return cuda::roofline_grid(t, block);
  return cuda::stream_vectors_grid(bytes, block);
}

result run_roofline_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const int device = point.device();
  const auto n = point.get<std::size_t>("n");
  const dtype t = point.word<dtype>("dtype", dtype_words);
  const roofline_work w = roofline_work_for(t, n, point.get<double>("intensity"));
  const std::size_t bytes = n * dtype_size(t);
  const std::string label = fmt::format("roofline n={} {}", n, dtype_name(t));
  const auto constants = roofline_constants(t);
  const double a = constants.first;
  const double b = constants.second;
  auto& pool = ctx.cpu_pool();

  result r;
  r.params = point.values();
  r.derived["arithmetic_intensity"] = w.intensity;
  r.derived["fmas_per_lane"] = w.chain.fmas;
  r.derived["lanes_per_fma_chain"] = w.chain.every;
  require_host_memory(2 * bytes, label);
  host_buffer in(bytes, host_memory::pinned);
  host_buffer got(bytes, host_memory::pinned);
  fill_roofline_input(t, in.data(), n, opts.seed, pool);

  const cuda::scoped_device guard(device);
  cuda::require_device_memory(2 * bytes, label.c_str());
  gpu_setup gpu(ctx.device_with_peaks(device), ctx.telemetry(device));
  const cudaStream_t s = gpu.stream.get();
  cuda::device_buffer<std::byte> din(bytes);
  cuda::device_buffer<std::byte> dout(bytes);
  cuda::copy_to_device_async(din.data(), in.data(), bytes, s);
  const int block = point.get<int>("block");
  const int grid = grid_blocks(point.word_or_size("grid"), t, bytes, block);
  const auto kernel = [&](cudaStream_t st) {
    cuda::launch_roofline(t, din.data(), dout.data(), n, w.chain, a, b, block, grid, st);
  };
  if (opts.verify) {
    r.verify.merge(checked_run(
                       s, {{dout.data(), bytes, true}, {got.data(), bytes, false}},
                       [&](cudaStream_t st) {
                         kernel(st);
                         cuda::copy_to_host_async(got.data(), dout.data(), bytes, st);
                       },
                       [&] { return check_roofline(t, n, w, opts.seed, got.data(), pool); }),
                   "kernel");
  }
  gpu_row row;
  row.name = "kernel";
  row.work = {w.bytes, w.flops, "FLOP", w.flops,
              cuda::flops_per_clock_per_sm(t, gpu.dev.info, true)};
  row.body = kernel;
  row.energy_per_byte = true;
  row.finish = [&](measurement& m) {
    m.description =
        w.chain.every == 1
            ? fmt::format("{} FMAs a lane, every lane; {} blocks of {}", w.chain.fmas, grid, block)
            : fmt::format("one FMA on one lane in {}; {} blocks of {}", w.chain.every, grid, block);
  };
  measure_row(r, gpu.sampler, opts, row);
  add_roofs(r, t, w, gpu.dev.info, device);
  return r;
}

/// A rate with its SI prefix: "4.52 T".
std::string si(double v) {
  if (v >= 1e12) return fmt::format("{:.3g} T", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.3g} G", v / 1e9);
  return fmt::format("{:.3g} ", v);
}

double number_or(const json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

/// Per element type: the measured memory roof (the highest bytes/s of its points), the measured
/// compute roof (the highest FLOP/s) and their ridge, beside the theoretical ones.
void write_summary(std::ostream& os, const std::vector<const result*>& results) {
  struct roofs {
    double bytes_per_s = 0;
    double flops_per_s = 0;
    double peak_bytes = 0;
    double peak_flops = 0;
    int points = 0;
  };
  std::map<std::string, roofs> by_type;
  for (const auto* r : results) {
    const auto* m = r->find("kernel");
    if (m == nullptr || m->stats.median <= 0 || r->status != result_status::ok) continue;
    auto& x = by_type[r->params.value("dtype", std::string("?"))];
    x.bytes_per_s = std::max(x.bytes_per_s, m->work.bytes / m->stats.median);
    x.flops_per_s = std::max(x.flops_per_s, m->work.items / m->stats.median);
    x.peak_bytes = number_or(r->derived, "theoretical_bytes_per_s", x.peak_bytes);
    x.peak_flops = std::max(x.peak_flops, number_or(r->derived, "theoretical_flops_per_s", 0));
    ++x.points;
  }
  if (by_type.empty()) return;
  write_wrapped(os,
                "roofline summary (measured roofs: the highest rate of the points swept; "
                "theoretical: peak bandwidth, CUDA-core FLOPs at the clock counted)",
                output_width());
  for (const auto& [type, x] : by_type) {
    std::string line = fmt::format("{}: memory roof {}B/s", type, si(x.bytes_per_s));
    if (x.peak_bytes > 0)
      line +=
          fmt::format(" ({:.1f}% of {}B/s)", 100 * x.bytes_per_s / x.peak_bytes, si(x.peak_bytes));
    line += fmt::format(", compute roof {}FLOP/s", si(x.flops_per_s));
    if (x.peak_flops > 0)
      line += fmt::format(" ({:.1f}% of {}FLOP/s)", 100 * x.flops_per_s / x.peak_flops,
                          si(x.peak_flops));
    line += fmt::format(", ridge {:.3g} FLOP/B", x.flops_per_s / x.bytes_per_s);
    if (x.peak_flops > 0 && x.peak_bytes > 0)
      line += fmt::format(" (theoretical {:.3g})", x.peak_flops / x.peak_bytes);
    write_wrapped(os, line + fmt::format(" over {} points", x.points), output_width(), "  ",
                  "    ");
  }
  os << '\n';
}

} // namespace

benchmark make_roofline_benchmark() {
  benchmark b("roofline",
              "FMA chains on streamed data, 1/16 to 1024 FLOPs per byte: measured memory and "
              "compute roofs and the ridge point",
              "Examples:\n"
              "  gpubench roofline\n"
              "  gpubench roofline --dtype f32,f64,f16,bf16\n"
              "  gpubench roofline --intensity 0.25,64 --n 2^28\n");
  auto elements = elements_param("elements of the array read and of the one written (a multiple "
                                 "of 8): 2^27, 100M, lists 1M,16M, ranges 1M:1G:x4",
                                 "2^27");
  elements.multiple_of = 8;
  auto intensity = param_spec{
      .name = "intensity",
      .help = "FLOPs per byte moved (read and write): the nearest whole number of FMAs per "
              "element, or one FMA on one element in k below one; a list sweeps",
      .default_value = "0.0625,0.125,0.25,0.5,1,2,4,8,16,32,64,128,256,512,1024",
      .sweepable = true,
      .kind = param_kind::number,
      .min = 0,
      .max = 4096,
      .min_exclusive = true,
      .gpu_only = true,
  };
  b.params = {elements, dtype_param({"f32", "f64", "f16", "bf16"}), intensity, block_param(),
              grid_param("blocks: vectors (one 16-byte vector per thread), device (every SM "
                         "filled once with resident blocks, each thread loops) or a block count",
                         1048576.0 /* 2^20 */, {"vectors", "device"})};
  b.supports_cpu_only = false;
  b.run_point = run_roofline_point;
  b.after_point.peak_fraction_of = {"kernel"};
  b.after_point.verify_failure = "GPU result differs from the CPU's chain";
  b.summary_table = write_summary;
  complete_declaration(b);
  return b;
}

} // namespace gpubench
