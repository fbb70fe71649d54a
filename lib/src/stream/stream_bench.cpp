#include "gpubench/stream/stream_bench.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/stream_kernels.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/host_buffer.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/stream/stream_cpu.hpp"
#include "gpubench/vecadd/vecadd_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace gpubench {

using cuda::stream_op;
using nlohmann::json;

namespace {

/// The array `op` writes, among a, b, c.
template <typename Array>
Array& output_of(stream_op op, Array& a, Array& b, Array& c) {
  const int k = cuda::stream_op_output(op);
  return k == 0 ? a : k == 1 ? b : c;
}

result run_stream_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const int device = point.device();
  const auto n = point.get<std::size_t>("n");
  const dtype type = point.word<dtype>("dtype", dtype_words);
  const std::size_t bytes = n * dtype_size(type);
  const std::string label = fmt::format("stream n={} {}", n, dtype_name(type));
  auto& pool = ctx.cpu_pool();

  result r;
  r.params = point.values();
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
                       static_cast<double>(n), "elements",
                       cuda::stream_op_flops(op) * static_cast<double>(n)};
  };
  const auto cpu_op = [&](stream_op op) {
    return stream_reference(op, type, a.data(), b.data(), c.data(), n, pool);
  };
  const auto measure_cpu = [&] {
    for (const auto op : cuda::all_stream_ops) {
      if (interrupt_requested()) return;
      r.measurements.push_back(measure_host(fmt::format("cpu_{}", cuda::stream_op_name(op)),
                                            opts.measure, work(op), [&] { cpu_op(op); }));
      add_cpu_energy(
          r.measurements.back(), opts, [&] { cpu_op(op); }, static_cast<double>(n), "element");
    }
  };
  if (opts.cpu_only) {
    measure_cpu();
    return r;
  }

  const cuda::scoped_device guard(device);
  cuda::stream_launch cfg;
  cfg.type = type;
  cfg.block = point.get<int>("block");
  const word_or_count grid = point.word_or_size("grid");
  const auto grid_for = [&](stream_op op) {
    if (const auto* blocks = std::get_if<std::int64_t>(&grid))
      return static_cast<int>(*blocks); // at most 2^20, as the table declares
    if (std::get<std::string>(grid) == "device")
      return cuda::stream_default_grid(device, op, type, cfg.block);
    return cuda::stream_vectors_grid(bytes, cfg.block);
  };
  const int dot_grid = std::min(grid_for(stream_op::dot), cuda::stream_dot_max_grid);
  const std::size_t dot_bytes = cuda::stream_dot_workspace_bytes(dot_grid);
  cuda::require_device_memory(3 * bytes + dot_bytes, label.c_str());
  gpu_setup gpu(ctx.device_with_peaks(device), ctx.telemetry(device));
  const cudaStream_t s = gpu.stream.get();
  gpu_sampler& sampler = gpu.sampler;
  cuda::device_buffer<std::byte> da(bytes);
  cuda::device_buffer<std::byte> db(bytes);
  cuda::device_buffer<std::byte> dc(bytes);
  cuda::device_buffer<std::byte> dot_ws(dot_bytes);
  cuda::fill_bytes_async(dot_ws.data(), 0, dot_bytes, s);
  cuda::copy_to_device_async(da.data(), a.data(), bytes, s);
  cuda::copy_to_device_async(db.data(), b.data(), bytes, s);
  cuda::copy_to_device_async(dc.data(), c.data(), bytes, s);
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
        cuda::fill_bytes_async(dot_result, 0xFF, sizeof(double), s);
        launch(op, s);
        double value = 0;
        cuda::copy_to_host_async(&value, dot_result, sizeof(double), s);
        cuda::synchronize(s);
        r.verify.merge(check_stream_dot(n, cpu_op(op), value), name);
        continue;
      }
      auto& out = output_of(op, da, db, dc);
      cuda::fill_bytes_async(out.data(), 0xFF, bytes, s);
      launch(op, s);
      cuda::copy_to_host_async(got.data(), out.data(), bytes, s);
      cuda::synchronize(s);
      cpu_op(op);
      const auto& expected = output_of(op, a, b, c);
      r.verify.merge(check_stream_array(type, expected.data(), got.data(), n, pool), name);
    }
    r.verify.method = "exact (copy, mul, add, triad); dot within 2.02 n 2^-53 sum|a_i b_i|";
  }

  for (const auto op : cuda::all_stream_ops) {
    if (interrupt_requested()) break;
    const std::string name(cuda::stream_op_name(op));
    gpu_row row;
    row.name = name;
    row.work = work(op);
    // Unfused multiplies and adds (the _rn intrinsics); dot's in f64.
    row.work.flops_per_clock_per_sm =
        cuda::flops_per_clock_per_sm(op == stream_op::dot ? dtype::f64 : type, gpu.dev.info, false);
    row.body = [&launch, op](cudaStream_t st) { launch(op, st); };
    row.energy_per_byte = true; // energy per element and per byte moved
    measure_row(r, sampler, opts, row);
  }
  if (opts.cpu_rows) measure_cpu();
  return r;
}

} // namespace

benchmark make_stream_benchmark() {
  benchmark b("stream",
              "BabelStream's copy, mul, add, triad and dot: memory bandwidth against the peaks",
              "Examples:\n"
              "  gpubench stream\n"
              "  gpubench stream --n 2^28 --dtype f32,f64\n"
              "  gpubench stream --n 2^28 --warm\n"
              "  gpubench stream --n 1M --cpu-only\n");
  b.params = {
      elements_param("elements per array: 2^25, 1Mi, 100M, lists 1M,16M, ranges 1M:1G:x4", "2^25"),
      dtype_param({"f32", "f64"}),
      block_param(),
      grid_param("blocks: vectors (one 16-byte vector per thread), device (every SM filled once "
                 "with resident blocks, each thread loops) or a block count; dot takes at most "
                 "2^14 blocks",
                 1048576.0 /* 2^20 */, {"device", "vectors"}),
  };
  b.run_point = run_stream_point;
  for (const auto op : cuda::all_stream_ops) {
    const std::string name(cuda::stream_op_name(op));
    b.after_point.ratios.push_back(
        {fmt::format("speedup_{}_vs_cpu_reference", name), "cpu_" + name, name});
    b.after_point.peak_fraction_of.push_back(name);
  }
  b.after_point.verify_failure = "GPU result differs from the CPU reference";
  complete_declaration(b);
  return b;
}

} // namespace gpubench
