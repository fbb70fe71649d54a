#include "gpubench/vecadd/vecadd_bench.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/half.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/vecadd.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/host_buffer.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace gpubench {

using nlohmann::json;

namespace {

constexpr std::array<word_choice<cuda::vecadd_kernel>, 2> kernel_words{
    {{"seed", cuda::vecadd_kernel::seed}, {"vectorized", cuda::vecadd_kernel::vectorized}}};
constexpr std::array<word_choice<host_memory>, 2> memory_words{
    {{"pinned", host_memory::pinned}, {"pageable", host_memory::pageable}}};

/// The bytes of one of vecadd's three vectors.
std::size_t vector_bytes(const point_view& point) {
  return point.get<std::size_t>("n") * dtype_size(point.word<dtype>("dtype", dtype_words));
}

/// What the CPU reference is, for the output: the path vecadd_cpu.cpp takes on this CPU.
std::string vecadd_reference_description(dtype type, int threads) {
  std::string path = fmt::format("; native {} add", dtype_name(type));
  if (type == dtype::f16)
    path = detail::f16c_available()
               ? "; f16 widened to f32 with F16C eight at a time, added, rounded back "
                 "the same way"
               : "; f16 widened to f32, added and rounded back by portable bit "
                 "arithmetic (no F16C on this CPU)";
  if (type == dtype::bf16)
    path = "; bf16 widened to f32, added and rounded back by bit arithmetic, a block at a time";
  return fmt::format("{} threads, one contiguous range each, a plain loop the compiler vectorizes "
                     "(-O3, baseline ISA, no -march=native){}",
                     threads, path);
}

/// Chunk boundaries for the overlapped path, rounded to 256 elements so every chunk keeps the
/// 16-byte alignment of the buffers.
std::vector<std::size_t> chunk_bounds(std::size_t n, std::size_t chunks) {
  std::vector<std::size_t> b{0};
  for (std::size_t k = 1; k < chunks; ++k) {
    const std::size_t edge = (n * k / chunks) / 256 * 256;
    if (edge > b.back()) b.push_back(edge);
  }
  b.push_back(n);
  return b;
}

result run_vecadd_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const int device = point.device();
  const auto n = point.get<std::size_t>("n");
  const dtype type = point.word<dtype>("dtype", dtype_words);
  const std::size_t size = dtype_size(type);
  const std::size_t bytes = vector_bytes(point);
  const std::string label = fmt::format("vecadd n={} {}", n, dtype_name(type));
  auto& pool = ctx.cpu_pool();

  result r;
  r.params = point.values();
  // A --cpu-only point has no memory parameter: its inputs are pageable.
  const host_memory mem_kind =
      point.has("memory") ? point.word<host_memory>("memory", memory_words) : host_memory::pageable;
  // a, b, the CPU reference's c and (with a GPU) the GPU's c.
  require_host_memory(bytes * (opts.cpu_only ? 3 : 4), label);
  host_buffer a(bytes, mem_kind);
  host_buffer b(bytes, mem_kind);
  host_buffer ref(bytes, host_memory::pageable);
  fill_random(type, a.data(), n, opts.seed, 1, pool);
  fill_random(type, b.data(), n, opts.seed, 2, pool);

  // One add an element (the kernel's and the CPU reference's FLOPs; the transfers have none).
  const work_counts work{3.0 * static_cast<double>(bytes), static_cast<double>(n), "elements",
                         static_cast<double>(n)};
  const auto reference = [&] { vecadd_reference(type, a.data(), b.data(), ref.data(), n, pool); };
  // The result that GPU outputs are checked against, computed before the timed runs: a SIGINT
  // can stop the measurement before its first run. Those runs recompute it from the same inputs.
  reference();
  auto cpu = measure_host("cpu_reference", opts.measure, work, reference);
  cpu.description = vecadd_reference_description(type, pool.size());
  add_cpu_energy(cpu, opts, reference, static_cast<double>(n), "element");
  if (opts.cpu_only) {
    r.measurements.push_back(std::move(cpu));
    return r;
  }

  const cuda::scoped_device guard(device);
  cuda::require_device_memory(3 * bytes, label.c_str());
  gpu_setup gpu(ctx.device_with_peaks(device), ctx.telemetry(device));
  gpu_sampler& sampler = gpu.sampler;
  cuda::device_buffer<std::byte> da(bytes);
  cuda::device_buffer<std::byte> db(bytes);
  cuda::device_buffer<std::byte> dc(bytes);
  host_buffer c(bytes, mem_kind);
  const cudaStream_t s = gpu.stream.get();
  cuda::copy_to_device_async(da.data(), a.data(), bytes, s);
  cuda::copy_to_device_async(db.data(), b.data(), bytes, s);

  cuda::vecadd_launch cfg;
  cfg.kernel = point.word<cuda::vecadd_kernel>("kernel", kernel_words);
  cfg.type = type;
  cfg.block = point.get<int>("block");
  const word_or_count grid = point.word_or_size("grid");
  if (const auto* blocks = std::get_if<std::int64_t>(&grid))
    cfg.grid = static_cast<int>(*blocks); // at most 2^31-1, as the table declares
  else
    cfg.grid = std::get<std::string>(grid) == "device"
                   ? cuda::vecadd_default_grid(device, type, cfg.block)
                   : 0;
  const auto kernel = [&](cudaStream_t st) {
    cuda::launch_vecadd(cfg, da.data(), db.data(), dc.data(), n, st);
  };

  const auto chunks = point.get<std::size_t>("chunks");
  const auto nstreams = point.get<std::size_t>("streams");
  std::vector<cuda::stream> side(nstreams);
  std::vector<cuda::event> joined;
  for (std::size_t i = 0; i < nstreams; ++i) joined.emplace_back(false);
  const cuda::event forked(false);
  const auto bounds = chunk_bounds(n, chunks);

  const auto end_to_end = [&](cudaStream_t st) {
    cuda::copy_to_device_async(da.data(), a.data(), bytes, st);
    cuda::copy_to_device_async(db.data(), b.data(), bytes, st);
    kernel(st);
    cuda::copy_to_host_async(c.data(), dc.data(), bytes, st);
  };
  // Chunk k goes to side stream k % streams: its copies in, its add and its copy out are ordered
  // on that stream while other chunks' copies (in both directions) and adds run beside them.
  const auto overlapped = [&](cudaStream_t st) {
    forked.record(st);
    for (auto& ss : side) forked.wait_on(ss.get());
    for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
      const cudaStream_t ss = side[k % nstreams].get();
      const std::size_t off = bounds[k] * size;
      const std::size_t len = bounds[k + 1] - bounds[k];
      cuda::copy_to_device_async(da.data() + off, a.data() + off, len * size, ss);
      cuda::copy_to_device_async(db.data() + off, b.data() + off, len * size, ss);
      cuda::launch_vecadd(cfg, da.data() + off, db.data() + off, dc.data() + off, len, ss);
      cuda::copy_to_host_async(c.data() + off, dc.data() + off, len * size, ss);
    }
    for (std::size_t i = 0; i < nstreams; ++i) {
      joined[i].record(side[i].get());
      joined[i].wait_on(st);
    }
  };

  // Checked runs against poisoned outputs; the runner turns a failed check into the verdict.
  const auto checked = [&](const std::function<void(cudaStream_t)>& body, bool from_device) {
    return checked_run(
        s, {{dc.data(), bytes, true}, {c.data(), bytes, false}},
        [&](cudaStream_t st) {
          body(st);
          if (from_device) cuda::copy_to_host_async(c.data(), dc.data(), bytes, st);
        },
        [&] { return check_vecadd(type, ref.data(), c.data(), n, pool); });
  };
  if (opts.verify) {
    r.verify.merge(checked(kernel, true), "kernel");
    r.verify.merge(checked(end_to_end, false), "end_to_end");
    r.verify.merge(checked(overlapped, false), "end_to_end_overlapped");
  }

  const double nd = static_cast<double>(n);
  const double bd = static_cast<double>(bytes);
  // Pageable copies make the host wait for the GPU while enqueuing: they cannot be timed behind a
  // blocking kernel (methodology.md).
  const body_kind copies =
      mem_kind == host_memory::pinned ? body_kind::asynchronous : body_kind::host_synchronous;
  const auto measure = [&](const char* name, work_counts w,
                           const std::function<void(cudaStream_t)>& body,
                           body_kind kind = body_kind::asynchronous) {
    measure_row(r, sampler, opts, plain_gpu_row(name, std::move(w), body, kind));
  };
  gpu_row kernel_row;
  kernel_row.name = "kernel";
  kernel_row.work = work;
  // 16-bit elements are added in f32 (vecadd.cu), one unfused add an element.
  kernel_row.work.flops_per_clock_per_sm = cuda::flops_per_clock_per_sm(
      type == dtype::f64 ? dtype::f64 : dtype::f32, gpu.dev.info, false);
  kernel_row.body = kernel;
  kernel_row.energy_per_byte = true; // energy per element and per byte moved
  measure_row(r, sampler, opts, kernel_row);
  measure(
      "h2d", {2 * bd, nd, "elements"},
      [&](cudaStream_t st) {
        cuda::copy_to_device_async(da.data(), a.data(), bytes, st);
        cuda::copy_to_device_async(db.data(), b.data(), bytes, st);
      },
      copies);
  measure(
      "d2h", {bd, nd, "elements"},
      [&](cudaStream_t st) { cuda::copy_to_host_async(c.data(), dc.data(), bytes, st); }, copies);
  measure("end_to_end", {3 * bd, nd, "elements"}, end_to_end, copies);
  measure("end_to_end_overlapped", {3 * bd, nd, "elements"}, overlapped, copies);
  r.measurements.push_back(std::move(cpu));
  return r;
}

} // namespace

benchmark make_vecadd_benchmark() {
  benchmark b("vecadd",
              "c = a + b on large vectors: kernel, transfers, end to end, vs a CPU reference",
              "Examples:\n"
              "  gpubench vecadd --n 10M\n"
              "  gpubench vecadd --n 1M:1G:x4 --dtype f32,f16 --format json --output v.json\n"
              "  gpubench vecadd --n 2^28 --kernel all --memory both\n"
              "  gpubench vecadd --n 10M --cpu-only\n");
  using k = param_kind;
  b.params = {
      elements_param("elements per vector: 10M, 1Mi, 2^28, lists 1M,10M, ranges 1M:1G:x4", "10M"),
      dtype_param({"f32", "f64", "f16", "bf16"}),
      {.name = "kernel",
       .help = "seed (one element per thread, as the article) or vectorized",
       .default_value = "vectorized",
       .sweepable = true,
       .kind = k::word,
       .choices = word_names<cuda::vecadd_kernel>(kernel_words),
       .gpu_only = true},
      {.name = "memory",
       .help = "host memory for transfers (both: pinned and pageable)",
       .default_value = "pinned",
       .sweepable = true,
       .kind = k::word,
       .choices = word_names<host_memory>(memory_words),
       .gpu_only = true},
      block_param(),
      grid_param("vectorized kernel's grid: vectors (one 16-byte vector per thread), device (fill "
                 "every SM once, then loop) or a block count",
                 2147483647.0, {"vectors", "device"}),
      {.name = "chunks",
       .help = "pieces of the overlapped end-to-end path",
       .default_value = "8",
       .kind = k::size,
       .min = 1,
       .max = 4096,
       .gpu_only = true},
      {.name = "streams",
       .help = "streams the overlapped path spreads its chunks over",
       .default_value = "2",
       .kind = k::size,
       .min = 1,
       .max = 64,
       .gpu_only = true},
  };
  b.run_point = run_vecadd_point;
  b.device_bytes = [](const point_view& point) { return 3 * vector_bytes(point); };
  b.after_point.ratios = {
      {"speedup_kernel_vs_cpu_reference", "cpu_reference", "kernel"},
      {"speedup_end_to_end_vs_cpu_reference", "cpu_reference", "end_to_end"},
      {"speedup_end_to_end_overlapped_vs_cpu_reference", "cpu_reference", "end_to_end_overlapped"},
      {"speedup_overlapped_vs_serial_end_to_end", "end_to_end", "end_to_end_overlapped"},
  };
  b.after_point.peak_fraction_of = {"kernel", "kernel (batch)"};
  b.after_point.verify_failure = "GPU result differs from the CPU reference";
  complete_declaration(b);
  return b;
}

} // namespace gpubench
