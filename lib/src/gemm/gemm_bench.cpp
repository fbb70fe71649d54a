#include "gpubench/gemm/gemm_bench.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/half.hpp"
#include "gpubench/core/random.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/gemm.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/host_buffer.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/gemm/gemm_cpu.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace gpubench {

using nlohmann::json;

namespace {

/// Above this many multiply-adds a build without OpenBLAS checks a grid of elements (the plain f64
/// loop would take minutes); below it, every element.
constexpr double full_loop_limit = 1ULL << 31U;
constexpr std::int64_t sampled_grid = 64;
/// --algos: the calls of each candidate that are timed (in turns) to choose the fastest.
constexpr int algo_rounds = 5;

gemm_shape shape_of(const point_view& point) {
  return gemm_shape_of(point.word<gemm_transposes>("layout", gemm_layout_words),
                       point.get<std::int64_t>("m"), point.get<std::int64_t>("n"),
                       point.get<std::int64_t>("k"));
}

cuda::gemm_precision precision_of(gemm_dtype t) {
  switch (t) {
  case gemm_dtype::f64: return cuda::gemm_precision::f64;
  case gemm_dtype::f32: return cuda::gemm_precision::f32;
  case gemm_dtype::tf32: return cuda::gemm_precision::tf32;
  case gemm_dtype::bf16: return cuda::gemm_precision::bf16;
  case gemm_dtype::f16: return cuda::gemm_precision::f16;
  case gemm_dtype::fp8: return cuda::gemm_precision::fp8;
  }
  return cuda::gemm_precision::f32;
}

/// A matrix of `count` values uniform in [-1, 1) from (seed, stream), rounded to `t`, stored in
/// `out` in that type, and the same rounded values as f64 in `wide` (the reference's inputs).
void fill_matrix(gemm_dtype t, void* out, std::vector<double>& wide, std::size_t count,
                 std::uint64_t seed, std::uint64_t stream, thread_pool& pool) {
  wide.resize(count);
  const random_sequence r(seed, stream);
  pool.parallel_for(count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const double x = 2.0 * r.unit_double(i) - 1.0;
      switch (t) {
      case gemm_dtype::f64:
        static_cast<double*>(out)[i] = x;
        wide[i] = x;
        break;
      case gemm_dtype::f32:
      case gemm_dtype::tf32: {
        const auto f = static_cast<float>(x);
        static_cast<float*>(out)[i] = f;
        wide[i] = f;
        break;
      }
      case gemm_dtype::bf16: {
        const auto h = float_to_bf16(static_cast<float>(x));
        static_cast<std::uint16_t*>(out)[i] = h;
        wide[i] = bf16_to_float(h);
        break;
      }
      case gemm_dtype::f16: {
        const auto h = float_to_half(static_cast<float>(x));
        static_cast<std::uint16_t*>(out)[i] = h;
        wide[i] = half_to_float(h);
        break;
      }
      case gemm_dtype::fp8: {
        const auto q = float_to_e4m3(static_cast<float>(x));
        static_cast<std::uint8_t*>(out)[i] = q;
        wide[i] = e4m3_to_float(q);
        break;
      }
      }
    }
  });
}

/// The row `name` of `r`, null when SIGINT stopped it before its first sample.
measurement* row(result& r, std::string_view name) {
  for (auto& m : r.measurements)
    if (m.name == name) return &m;
  return nullptr;
}

/// Whether OpenBLAS gets A and B widened to f32: the 16- and 8-bit types, which it has no
/// product for.
bool widened_for_openblas(gemm_dtype t) { return gemm_input_bytes(t) < 4; }

std::string openblas_description(gemm_dtype t, int threads) {
  const bool f64 = t == gemm_dtype::f64;
  std::string how = f64 ? "cblas_dgemm" : "cblas_sgemm";
  if (t == gemm_dtype::tf32) how += " (the CPU has no tf32: the f32 product)";
  if (widened_for_openblas(t))
    how += fmt::format(" on the {} inputs widened to f32 beforehand (exact, not timed), f32 out",
                       gemm_dtype_name(t));
  return fmt::format("{}, {} of its own threads, column-major, alpha 1, beta 0: {}",
                     openblas_config(), threads, how);
}

/// What every row of one point shares: the product, its sizes and its declared work.
struct gemm_point {
  gemm_dtype type = gemm_dtype::f32;
  gemm_shape shape;
  std::size_t in_size = 0;  ///< bytes of an element of A and B
  std::size_t out_size = 0; ///< bytes of an element of C
  std::size_t count_a = 0;
  std::size_t count_b = 0;
  std::size_t count_c = 0;
  std::string label;
  work_counts work;
  bool f64 = false;
  bool widen = false; ///< a 16- or 8-bit type: OpenBLAS gets the inputs widened to f32
  bool with_openblas = false;
  int algos = 1; ///< the heuristic's candidates timed (--algos); 1: its first, untimed
};

gemm_point describe(const point_view& point) {
  gemm_point g;
  g.type = point.word<gemm_dtype>("dtype", gemm_dtype_words);
  g.shape = shape_of(point);
  g.in_size = gemm_input_bytes(g.type);
  g.out_size = gemm_output_bytes(g.type);
  g.count_a = static_cast<std::size_t>(g.shape.m * g.shape.k);
  g.count_b = static_cast<std::size_t>(g.shape.k * g.shape.n);
  g.count_c = static_cast<std::size_t>(g.shape.m * g.shape.n);
  g.label =
      fmt::format("gemm {}x{}x{} {}", g.shape.m, g.shape.n, g.shape.k, gemm_dtype_name(g.type));
  g.work = gemm_work(g.shape, g.type);
  g.f64 = g.type == gemm_dtype::f64;
  g.widen = widened_for_openblas(g.type);
  g.with_openblas = openblas_built_in();
  if (point.has("algos")) g.algos = point.get<int>("algos");
  return g;
}

/// Host memory the point takes: A, B, C in their type; their f64 copies for the reference (and
/// |A|, |B| with OpenBLAS); the reference's C and S; f32 copies for OpenBLAS when the type is
/// 16-bit; the CPU row's C.
std::size_t host_bytes(const gemm_point& g) {
  const double reference_cells = g.with_openblas ? static_cast<double>(g.count_c)
                                                 : static_cast<double>(sampled_grid * sampled_grid);
  return (g.count_a + g.count_b) * g.in_size + g.count_c * g.out_size +
         (g.count_a + g.count_b) * 8 * (g.with_openblas ? 2 : 1) +
         static_cast<std::size_t>(2 * 8 *
                                  std::min(reference_cells, static_cast<double>(g.count_c))) +
         (g.widen ? (g.count_a + g.count_b) * 4 : 0) + g.count_c * (g.f64 ? 8 : 4);
}

/// The point's inputs from the printed seed, and the reference every row is checked against
/// (every element with OpenBLAS's dgemm, or a grid of them); empty without verification.
struct gemm_inputs {
  host_buffer a;
  host_buffer b;
  gemm_reference ref;
};

gemm_inputs make_inputs(const gemm_point& g, const common_options& opts, thread_pool& pool) {
  const host_memory kind = opts.cpu_only ? host_memory::pageable : host_memory::pinned;
  gemm_inputs in{
      host_buffer(g.count_a * g.in_size, kind), host_buffer(g.count_b * g.in_size, kind), {}};
  std::vector<double> a64;
  std::vector<double> b64;
  fill_matrix(g.type, in.a.data(), a64, g.count_a, opts.seed, 1, pool);
  fill_matrix(g.type, in.b.data(), b64, g.count_b, opts.seed, 2, pool);
  if (opts.verify) {
    const double fmas = static_cast<double>(g.shape.m) * static_cast<double>(g.shape.n) *
                        static_cast<double>(g.shape.k);
    in.ref = gemm_reference_f64(g.shape, a64, b64, pool,
                                fmas <= full_loop_limit ? g.shape.m + g.shape.n : sampled_grid);
  }
  return in;
}

/// `count` elements of a 16- or 8-bit type widened to f32 (exactly).
void widen_to_f32(gemm_dtype t, const std::byte* in, float* out, std::size_t count) {
  const auto* h = static_cast<const std::uint16_t*>(static_cast<const void*>(in));
  const auto* q = static_cast<const std::uint8_t*>(static_cast<const void*>(in));
  if (t == gemm_dtype::f16)
    half_to_float(h, out, count);
  else if (t == gemm_dtype::bf16)
    for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_float(h[i]);
  else
    for (std::size_t i = 0; i < count; ++i) out[i] = e4m3_to_float(q[i]);
}

/// The CPU row's inputs: A and B as they are, or for a 16- or 8-bit type widened to f32 into
/// `a32` and `b32` (exact, not timed).
std::pair<const void*, const void*> openblas_inputs(const gemm_point& g, const gemm_inputs& in,
                                                    std::vector<float>& a32,
                                                    std::vector<float>& b32) {
  if (!g.widen || !g.with_openblas) return {in.a.data(), in.b.data()};
  a32.resize(g.count_a);
  b32.resize(g.count_b);
  widen_to_f32(g.type, in.a.data(), a32.data(), g.count_a);
  widen_to_f32(g.type, in.b.data(), b32.data(), g.count_b);
  return {a32.data(), b32.data()};
}

/// The CPU row: OpenBLAS on the pool's thread count, from the same rounded inputs, its own
/// product verified against the same bound in its output type.
void measure_openblas(result& r, const common_options& opts, const gemm_point& g,
                      const gemm_inputs& in, thread_pool& pool) {
  if (!g.with_openblas || !opts.cpu_rows || interrupt_requested()) return;
  std::vector<float> a32;
  std::vector<float> b32;
  // No structured binding: a lambda captures these, which clang 14 (the fuzz build) cannot.
  const auto inputs = openblas_inputs(g, in, a32, b32);
  const void* cpu_a = inputs.first;
  const void* cpu_b = inputs.second;
  std::vector<std::byte> cpu_c(g.count_c * (g.f64 ? 8 : 4));
  const int threads = pool.size();
  const auto cpu_gemm = [&] { openblas_gemm(g.shape, g.f64, cpu_a, cpu_b, cpu_c.data(), threads); };
  if (opts.verify) {
    std::memset(cpu_c.data(), 0xFF, cpu_c.size());
    cpu_gemm();
    r.verify.merge(
        check_gemm(g.f64 ? gemm_dtype::f64 : gemm_dtype::f32, g.shape, cpu_c.data(), in.ref),
        "cpu_openblas");
  }
  measure_cpu(r, "cpu_openblas", opts.measure, g.work, cpu_gemm);
  if (auto* m = row(r, "cpu_openblas"); m != nullptr) {
    m->description = openblas_description(g.type, threads);
    add_cpu_energy(*m, opts, cpu_gemm, g.work.items, "FLOP");
  }
}

/// The SM clock the kernel row ran at: the one the GPU counted across its samples, else NVML's
/// median reading during it, else the device's maximum; and where it came from.
std::pair<double, std::string> kernel_clock_mhz(const measurement& m, int device) {
  if (const double mhz = counted_sm_clock_mhz(m); mhz > 0)
    return {mhz, m.sm_clock.value("median_mhz", 0.0) > 0
                     ? "SM clock the GPU counted across the kernel row's samples (median)"
                     : "SM clock NVML read during the kernel row (median)"};
  return {cuda::max_sm_clock_khz(device) / 1e3, "the device's maximum SM clock (no reading)"};
}

/// FLOP/s against the dtype's theoretical peak at the kernel row's clock, from the
/// per-architecture table.
void add_peak_fraction(result& r, const gemm_point& g, const cuda::device_info& info, int device) {
  const auto* m = r.find("kernel");
  if (m == nullptr || m->stats.median <= 0) return;
  const auto per_clock = gemm_flops_per_clock_per_sm(g.type, info.cc_major, info.cc_minor);
  if (!per_clock) {
    r.derived["kernel_peak_fraction"] =
        fmt::format("not known for compute capability {}.{}", info.cc_major, info.cc_minor);
    return;
  }
  const auto [mhz, source] = kernel_clock_mhz(*m, device);
  if (mhz <= 0) return;
  const double peak = *per_clock * info.sms * mhz * 1e6;
  r.derived["kernel_peak_flops_per_s"] = peak;
  r.derived["kernel_peak_clock_mhz"] = mhz;
  r.derived["kernel_peak_clock"] = source;
  r.derived["kernel_peak_fraction"] = g.work.items / m->stats.median / peak;
}

/// The GPU rows: the cuBLASLt product (`kernel`, its algorithm named), `h2d`, `d2h` and
/// `end_to_end`, the product and the end-to-end path verified first.
void measure_gpu(result& r, run_context& ctx, const gemm_point& g, int device,
                 const gemm_inputs& in) {
  const auto& opts = ctx.options();
  const cuda::scoped_device guard(device);
  const std::size_t bytes_a = g.count_a * g.in_size;
  const std::size_t bytes_b = g.count_b * g.in_size;
  const std::size_t bytes_c = g.count_c * g.out_size;
  cuda::require_device_memory(bytes_a + bytes_b + bytes_c + cuda::gemm_plan::workspace_bytes,
                              g.label.c_str());
  cuda::gemm_plan plan({precision_of(g.type), g.shape.m, g.shape.n, g.shape.k, g.shape.trans_a,
                        g.shape.trans_b, g.algos});
  gpu_setup gpu(ctx.device_with_peaks(device), ctx.telemetry(device));
  const cudaStream_t s = gpu.stream.get();
  cuda::device_buffer<std::byte> da(bytes_a);
  cuda::device_buffer<std::byte> db(bytes_b);
  cuda::device_buffer<std::byte> dc(bytes_c);
  host_buffer c(bytes_c, host_memory::pinned);
  cuda::copy_to_device_async(da.data(), in.a.data(), bytes_a, s);
  cuda::copy_to_device_async(db.data(), in.b.data(), bytes_b, s);
  if (g.algos > 1) {
    plan.choose_fastest(da.data(), db.data(), dc.data(), s, algo_rounds);
    r.derived["kernel_algorithm_candidates"] = plan.candidate_count();
    r.derived["kernel_algorithm_rank"] = plan.rank_in_use();
  }
  const auto kernel = [&](cudaStream_t st) { plan.run(da.data(), db.data(), dc.data(), st); };
  const auto upload = [&](cudaStream_t st) {
    cuda::copy_to_device_async(da.data(), in.a.data(), bytes_a, st);
    cuda::copy_to_device_async(db.data(), in.b.data(), bytes_b, st);
  };
  const auto download = [&](cudaStream_t st) {
    cuda::copy_to_host_async(c.data(), dc.data(), bytes_c, st);
  };
  const auto end_to_end = [&](cudaStream_t st) {
    upload(st);
    kernel(st);
    download(st);
  };
  if (opts.verify) {
    const auto compare = [&] { return check_gemm(g.type, g.shape, c.data(), in.ref); };
    const std::vector<poison_target> outputs{{dc.data(), bytes_c, true},
                                             {c.data(), bytes_c, false}};
    r.verify.merge(checked_run(
                       s, outputs,
                       [&](cudaStream_t st) {
                         kernel(st);
                         download(st);
                       },
                       compare),
                   "kernel");
    r.verify.merge(checked_run(s, outputs, end_to_end, compare), "end_to_end");
  }

  gpu_row kernel_row;
  kernel_row.name = "kernel";
  kernel_row.work = g.work; // energy per FLOP
  kernel_row.work.flops_per_clock_per_sm =
      gemm_flops_per_clock_per_sm(g.type, gpu.dev.info.cc_major, gpu.dev.info.cc_minor).value_or(0);
  kernel_row.body = kernel;
  kernel_row.finish = [&plan](measurement& m) { m.description = plan.algorithm(); };
  measure_row(r, gpu.sampler, opts, kernel_row);
  const auto elements = [](std::size_t n) { return static_cast<double>(n); };
  const auto plain = [&](const char* name, work_counts w,
                         const std::function<void(cudaStream_t)>& body) {
    measure_row(r, gpu.sampler, opts, plain_gpu_row(name, std::move(w), body));
  };
  plain("h2d",
        {static_cast<double>(bytes_a + bytes_b), elements(g.count_a + g.count_b), "elements"},
        upload);
  plain("d2h", {static_cast<double>(bytes_c), elements(g.count_c), "elements"}, download);
  plain("end_to_end",
        {static_cast<double>(bytes_a + bytes_b + bytes_c), g.work.items, "FLOP", g.work.flops},
        end_to_end);
  add_peak_fraction(r, g, gpu.dev.info, device);
}

result run_gemm_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const gemm_point g = describe(point);
  result r;
  r.params = point.values();
  if (!g.with_openblas) r.derived["cpu_openblas"] = "not built in";
  if (opts.cpu_only && !g.with_openblas) {
    r.status = result_status::skipped;
    r.reason = "this build has no OpenBLAS, the only CPU row of gemm (docs/gemm.md)";
    return r;
  }
  if (!opts.cpu_only) {
    const auto& info = ctx.device_with_peaks(point.device()).info;
    if (auto why = gemm_unsupported_reason(g.type, g.shape.trans_a, g.shape.trans_b, info.cc_major,
                                           info.cc_minor);
        !why.empty()) {
      r.status = result_status::skipped;
      r.reason = std::move(why);
      return r;
    }
  }
  require_host_memory(host_bytes(g), g.label);
  auto& pool = ctx.cpu_pool();
  const gemm_inputs in = make_inputs(g, opts, pool);
  if (!opts.cpu_only) measure_gpu(r, ctx, g, point.device(), in);
  measure_openblas(r, opts, g, in, pool);
  return r;
}

} // namespace

benchmark make_gemm_benchmark() {
  benchmark b("gemm",
              "C = op(A) op(B) on cuBLASLt vs OpenBLAS: FLOP/s, transfers, end to end, verified",
              "Examples:\n"
              "  gpubench gemm\n"
              "  gpubench gemm --dtype bf16,f16,tf32 --m 8192 --n 8192 --k 8192\n"
              "  gpubench gemm --m 1024:16384:x2 --dtype f32 --layout nn,tn\n"
              "  gpubench gemm --m 512 --n 512 --k 512 --cpu-only\n");
  using k = param_kind;
  const auto extent = [](const char* name, const char* help) {
    return param_spec{.name = name,
                      .help = help,
                      .default_value = "8192",
                      .sweepable = true,
                      .kind = k::size,
                      .min = 1,
                      .max = 1048576.0 /* 2^20 */};
  };
  b.params = {
      extent("m", "rows of C and of op(A)"),
      extent("n", "columns of C and of op(B)"),
      extent("k", "columns of op(A), rows of op(B): the length of each dot product"),
      {.name = "dtype",
       .help = "element type of A, B and C: f64, f32 (CUDA cores), tf32 (f32 data on the tensor "
               "cores), bf16, f16 (f32 accumulation), fp8 (E4M3 inputs, bf16 out, f32 "
               "accumulation; sm_89 and newer, --layout tn before sm_100)",
       .default_value = "f32",
       .sweepable = true,
       .kind = k::word,
       .choices = word_names<gemm_dtype>(gemm_dtype_words)},
      {.name = "layout",
       .help = "nn, nt or tn: whether A and B are used transposed (column-major storage)",
       .default_value = "nn",
       .sweepable = true,
       .kind = k::word,
       .choices = word_names<gemm_transposes>(gemm_layout_words)},
      {.name = "algos",
       .help = "time the first N algorithms cuBLASLt's heuristic ranks for the point (5 calls "
               "each, in turns) and measure the fastest; unset: the heuristic's first, untimed",
       .sweepable = true,
       .kind = k::size,
       .min = 1,
       .max = 32,
       .gpu_only = true},
  };
  b.run_point = run_gemm_point;
  b.device_bytes = [](const point_view& point) {
    const auto t = point.word<gemm_dtype>("dtype", gemm_dtype_words);
    const gemm_shape s = shape_of(point);
    return static_cast<std::size_t>(s.m * s.k + s.k * s.n) * gemm_input_bytes(t) +
           static_cast<std::size_t>(s.m * s.n) * gemm_output_bytes(t) +
           cuda::gemm_plan::workspace_bytes;
  };
  b.after_point.ratios = {{"speedup_kernel_vs_cpu_openblas", "cpu_openblas", "kernel"},
                          {"speedup_end_to_end_vs_cpu_openblas", "cpu_openblas", "end_to_end"}};
  b.after_point.verify_failure = "GPU result outside the bound of the f64 reference";
  complete_declaration(b);
  return b;
}

} // namespace gpubench
