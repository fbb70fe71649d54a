// gpubench's own kernels timed by nvbench (cold: nvbench's L2 flush before every sample), so the
// two timers can be set side by side on the same code (scripts/gpu-anchors.sh,
// docs/methodology.md). Each benchmark calls gpubench's launchers from libgpubench_cuda.a with the
// launch shape gpubench uses by default: vecadd's seed and vectorized kernels (block 256, one
// 16-byte vector per thread), stream's five kernels (block 256, --grid vectors, dot at most
// stream_dot_max_grid blocks), f32, n = 2^20 to 2^30 by factors of 4.
// Built by scripts/anchors/build.sh against the cuda-bench wheel's nvbench.
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream_kernels.hpp"
#include "gpubench/cuda/vecadd.hpp"

#include <nvbench/nvbench.cuh>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace {

namespace gc = gpubench::cuda;

/// Non-zero, finite input (every byte 0x3E: 0.186 in f32), written once before timing.
void fill(void* p, std::size_t bytes) { GPUBENCH_CUDA_TRY(cudaMemset(p, 0x3E, bytes)); }

void vecadd(nvbench::state& state) {
  const auto n = static_cast<std::size_t>(state.get_int64("n"));
  const auto& kernel = state.get_string("kernel");
  gc::vecadd_launch cfg;
  cfg.kernel = kernel == "seed" ? gc::vecadd_kernel::seed : gc::vecadd_kernel::vectorized;
  cfg.type = gpubench::dtype::f32;
  cfg.block = 256;
  cfg.grid = 0; // gpubench vecadd's default, --grid vectors
  gc::device_buffer<float> a(n);
  gc::device_buffer<float> b(n);
  gc::device_buffer<float> c(n);
  fill(a.data(), a.bytes());
  fill(b.data(), b.bytes());
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  state.add_element_count(n);
  state.add_global_memory_reads<float>(2 * n);
  state.add_global_memory_writes<float>(n);
  state.exec(nvbench::exec_tag::no_batch, [&](nvbench::launch& launch) {
    gc::launch_vecadd(cfg, a.data(), b.data(), c.data(), n, launch.get_stream());
  });
}
NVBENCH_BENCH(vecadd)
    .add_string_axis("kernel", {"seed", "vectorized"})
    .add_int64_power_of_two_axis("n", nvbench::range(20, 30, 2));

gc::stream_op op_named(const std::string& name) {
  for (const auto op : gc::all_stream_ops)
    if (gc::stream_op_name(op) == name) return op;
  throw std::invalid_argument("unknown stream kernel " + name);
}

void stream(nvbench::state& state) {
  const auto n = static_cast<std::size_t>(state.get_int64("n"));
  const auto op = op_named(state.get_string("op"));
  const std::size_t bytes = n * sizeof(float);
  gc::stream_launch cfg;
  cfg.type = gpubench::dtype::f32;
  cfg.block = 256;
  cfg.grid = gc::stream_vectors_grid(bytes, cfg.block); // gpubench stream's --grid vectors
  if (op == gc::stream_op::dot) cfg.grid = std::min(cfg.grid, gc::stream_dot_max_grid);
  gc::device_buffer<float> a(n);
  gc::device_buffer<float> b(n);
  gc::device_buffer<float> c(n);
  const std::size_t workspace_bytes = gc::stream_dot_workspace_bytes(cfg.grid);
  gc::device_buffer<std::byte> workspace(workspace_bytes);
  fill(a.data(), bytes);
  fill(b.data(), bytes);
  fill(c.data(), bytes);
  GPUBENCH_CUDA_TRY(cudaMemset(workspace.data(), 0, workspace_bytes)); // zeroed once, as gpubench
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  const gc::stream_arrays arrays{a.data(), b.data(), c.data(), workspace.data()};
  const int arrays_moved = gc::stream_op_arrays(op);
  const bool writes = gc::stream_op_output(op) >= 0;
  state.add_element_count(n);
  state.add_global_memory_reads<float>(static_cast<std::size_t>(arrays_moved - (writes ? 1 : 0)) *
                                       n);
  if (writes) state.add_global_memory_writes<float>(n);
  state.exec(nvbench::exec_tag::no_batch, [&](nvbench::launch& launch) {
    gc::launch_stream(op, cfg, arrays, n, launch.get_stream());
  });
}
NVBENCH_BENCH(stream)
    .add_string_axis("op", {"copy", "mul", "add", "triad", "dot"})
    .add_int64_power_of_two_axis("n", nvbench::range(20, 30, 2));

} // namespace
