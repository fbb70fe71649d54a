#include "gpubench/stream_bench.hpp"

#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/stream_kernels.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/host_buffer.hpp"
#include "gpubench/sizes.hpp"
#include "gpubench/stream_cpu.hpp"
#include "gpubench/vecadd_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace gpubench {

using cuda::stream_op;
using nlohmann::json;

namespace {

constexpr std::uint64_t max_elements = std::uint64_t{1} << 36U;
/// The most blocks a grid gets; beyond, threads loop.
constexpr std::size_t max_grid = std::size_t{1} << 20U;

std::vector<json> plan_stream(const param_values& v, const common_options& opts) {
  const auto sizes = parse_size_list(value_of(v, "n"), "n");
  for (const auto n : sizes)
    if (n == 0 || n > max_elements)
      throw usage_error(fmt::format("--n: {} is out of range (1 to 2^36 elements)", n));
  const auto types = parse_word_list(value_of(v, "dtype"), "dtype", {"f32", "f64"});
  const auto blocks = parse_size_list(value_of(v, "block"), "block");
  for (const auto b : blocks)
    if (b < 32 || b > 1024 || b % 32 != 0)
      throw usage_error(fmt::format("--block: {} must be a multiple of 32 from 32 to 1024", b));
  const auto& grid = value_of(v, "grid");
  if (grid != "device" && grid != "vectors") {
    const auto g = parse_size(grid, "grid");
    if (g < 1 || g > (1U << 20U))
      throw usage_error(fmt::format("--grid: {} is out of range (1 to 2^20 blocks)", g));
  }
  std::vector<json> points;
  for (const auto n : sizes)
    for (const auto& t : types)
      for (const auto b : opts.cpu_only ? std::vector<std::uint64_t>{0} : blocks) {
        json p{{"n", n}, {"dtype", t}};
        if (!opts.cpu_only) {
          p["block"] = b;
          p["grid"] = grid == "device" || grid == "vectors"
                          ? grid
                          : std::to_string(parse_size(grid, "grid"));
        }
        points.push_back(std::move(p));
      }
  return points;
}

/// The array `op` writes, among a, b, c.
template <typename Array>
Array& output_of(stream_op op, Array& a, Array& b, Array& c) {
  const int k = cuda::stream_op_output(op);
  return k == 0 ? a : k == 1 ? b : c;
}

result run_stream_point(const json& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const int device = point_device(point);
  const auto n = point.at("n").get<std::size_t>();
  const dtype type = *parse_dtype(point.at("dtype").get<std::string>());
  const std::size_t bytes = n * dtype_size(type);
  const std::string label = fmt::format("stream n={} {}", n, dtype_name(type));
  auto& pool = ctx.cpu_pool();

  result r;
  r.params = point;
  // a, b, c and (with a GPU) the copy of one GPU output.
  require_host_memory(bytes * (opts.cpu_only ? 3 : 4), label);
  host_buffer a(bytes, host_memory::pageable);
  host_buffer b(bytes, host_memory::pageable);
  host_buffer c(bytes, host_memory::pageable);
  fill_random(type, a.data(), n, opts.seed, 1, pool);
  fill_random(type, b.data(), n, opts.seed, 2, pool);
  fill_random(type, c.data(), n, opts.seed, 3, pool);

  const auto work = [&](stream_op op) {
    return work_counts{cuda::stream_op_arrays(op) * static_cast<double>(bytes),
                       static_cast<double>(n), "elements"};
  };
  const auto cpu_op = [&](stream_op op) {
    return stream_reference(op, type, a.data(), b.data(), c.data(), n, pool);
  };
  const auto measure_cpu = [&] {
    for (const auto op : cuda::all_stream_ops) {
      if (interrupt_requested()) return;
      r.measurements.push_back(measure_host(fmt::format("cpu_{}", cuda::stream_op_name(op)),
                                            opts.measure, work(op), [&] { cpu_op(op); }));
    }
  };
  if (opts.cpu_only) {
    measure_cpu();
    return r;
  }

  const cuda::scoped_device guard(device);
  cuda::stream_launch cfg;
  cfg.type = type;
  cfg.block = point.at("block").get<int>();
  const auto grid_mode = point.value("grid", std::string("device"));
  const auto grid_for = [&](stream_op op) {
    if (grid_mode == "device") return cuda::stream_default_grid(device, op, type, cfg.block);
    if (grid_mode == "vectors") {
      const std::size_t vectors = std::max<std::size_t>(1, bytes / 16);
      const std::size_t blocks = (vectors + cfg.block - 1) / static_cast<std::size_t>(cfg.block);
      return static_cast<int>(std::min<std::size_t>(blocks, max_grid));
    }
    return std::stoi(grid_mode);
  };
  // The last block of dot adds one partial per block: beyond 2^14 blocks that serial tail costs
  // more than the extra blocks gain, so dot's grid stops there and its threads loop.
  const int dot_grid = std::min(grid_for(stream_op::dot), 1 << 14);
  const std::size_t dot_bytes = cuda::stream_dot_workspace_bytes(dot_grid);
  cuda::require_device_memory(3 * bytes + dot_bytes, label.c_str());
  const device_record& dev = ctx.device_with_peaks(device);
  const cuda::stream main_stream;
  const cudaStream_t s = main_stream.get();
  cuda::l2_flusher flusher(dev.info.l2_bytes);
  gpu_sampler sampler(s, &flusher);
  cuda::device_buffer<std::byte> da(bytes);
  cuda::device_buffer<std::byte> db(bytes);
  cuda::device_buffer<std::byte> dc(bytes);
  cuda::device_buffer<std::byte> dot_ws(dot_bytes);
  GPUBENCH_CUDA_TRY(cudaMemsetAsync(dot_ws.data(), 0, dot_bytes, s));
  GPUBENCH_CUDA_TRY(cudaMemcpyAsync(da.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
  GPUBENCH_CUDA_TRY(cudaMemcpyAsync(db.data(), b.data(), bytes, cudaMemcpyHostToDevice, s));
  GPUBENCH_CUDA_TRY(cudaMemcpyAsync(dc.data(), c.data(), bytes, cudaMemcpyHostToDevice, s));
  const cuda::stream_arrays arrays{da.data(), db.data(), dc.data(), dot_ws.data()};
  std::array<cuda::stream_launch, cuda::all_stream_ops.size()> cfgs{};
  for (const auto op : cuda::all_stream_ops) {
    cfgs.at(static_cast<std::size_t>(op)) = cfg;
    cfgs.at(static_cast<std::size_t>(op)).grid = op == stream_op::dot ? dot_grid : grid_for(op);
  }
  const auto launch = [&](stream_op op, cudaStream_t st) {
    cuda::launch_stream(op, cfgs.at(static_cast<std::size_t>(op)), arrays, n, st);
  };
  double* const dot_result = cuda::stream_dot_result(dot_ws.data());

  // BabelStream's order, GPU and CPU in step: each kernel reads what the previous ones wrote.
  // Before each kernel its output is poisoned (all-ones bytes are NaN in both types).
  if (opts.verify) {
    host_buffer got(bytes, host_memory::pageable);
    for (const auto op : cuda::all_stream_ops) {
      const std::string name(cuda::stream_op_name(op));
      if (op == stream_op::dot) {
        GPUBENCH_CUDA_TRY(cudaMemsetAsync(dot_result, 0xFF, sizeof(double), s));
        launch(op, s);
        double value = 0;
        GPUBENCH_CUDA_TRY(
            cudaMemcpyAsync(&value, dot_result, sizeof(double), cudaMemcpyDeviceToHost, s));
        GPUBENCH_CUDA_TRY(cudaStreamSynchronize(s));
        r.verify.merge(check_stream_dot(n, cpu_op(op), value), name);
        continue;
      }
      auto& out = output_of(op, da, db, dc);
      GPUBENCH_CUDA_TRY(cudaMemsetAsync(out.data(), 0xFF, bytes, s));
      launch(op, s);
      GPUBENCH_CUDA_TRY(cudaMemcpyAsync(got.data(), out.data(), bytes, cudaMemcpyDeviceToHost, s));
      GPUBENCH_CUDA_TRY(cudaStreamSynchronize(s));
      cpu_op(op);
      const auto& expected = output_of(op, a, b, c);
      r.verify.merge(check_stream_array(type, expected.data(), got.data(), n, pool), name);
    }
    r.verify.method = "exact (copy, mul, add, triad); dot within 2.02 n 2^-53 sum|a_i b_i|";
    if (!r.verify.passed) {
      r.status = result_status::failed;
      r.reason = "GPU result differs from the CPU reference";
    }
  }

  for (const auto op : cuda::all_stream_ops) {
    if (interrupt_requested()) break;
    auto m = sampler.run(std::string(cuda::stream_op_name(op)), opts.measure, work(op),
                         [&](cudaStream_t st) { launch(op, st); });
    add_peak_fractions(m, dev);
    r.measurements.push_back(std::move(m));
  }
  measure_cpu();
  for (const auto op : cuda::all_stream_ops) {
    const std::string name(cuda::stream_op_name(op));
    const auto* gpu = r.find(name);
    const auto* cpu = r.find("cpu_" + name);
    if (gpu != nullptr && cpu != nullptr && gpu->median() > 0)
      r.derived[fmt::format("speedup_{}_vs_cpu_reference", name)] = cpu->median() / gpu->median();
  }
  return r;
}

} // namespace

benchmark make_stream_benchmark() {
  benchmark b;
  b.name = "stream";
  b.summary = "BabelStream's copy, mul, add, triad and dot: memory bandwidth against the peaks";
  b.examples = "Examples:\n"
               "  gpubench stream\n"
               "  gpubench stream --n 2^28 --dtype f32,f64\n"
               "  gpubench stream --n 2^28 --warm\n"
               "  gpubench stream --n 1M --cpu-only\n";
  b.params = {
      {"n", "elements per array: 2^25, 1Mi, 100M, lists 1M,16M, ranges 1M:1G:x4", "2^25", true},
      {"dtype", "element type: f32, f64 or all (list sweeps)", "f32", true},
      {"block", "threads per block (multiple of 32)", "256", true},
      {"grid",
       "blocks: device (every SM filled once with resident blocks, each thread loops), vectors "
       "(one 16-byte vector per thread, at most 2^20 blocks) or a block count; dot takes at most "
       "2^14 blocks",
       "device", false},
  };
  b.plan = plan_stream;
  b.run_point = run_stream_point;
  return b;
}

} // namespace gpubench
