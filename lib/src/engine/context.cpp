#include "gpubench/engine/context.hpp"
#include "gpubench/report/text_table.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <unistd.h>

namespace gpubench {

run_context::run_context(common_options opts) : opts_(std::move(opts)) {}

thread_pool& run_context::cpu_pool() {
  if (!pool_) {
    pool_ = std::make_unique<thread_pool>(opts_.cpu_threads);
    const int machine = static_cast<int>(std::thread::hardware_concurrency());
    if (opts_.cpu_threads <= 0 && !affinity_noted_ && pool_->size() < machine) {
      affinity_noted_ = true;
      log("gpubench: {}, so the CPU rows and the checks of results use {} thread{}; under mpirun, "
          "--bind-to numa or --bind-to none gives each rank more",
          cpu_confinement(pool_->size(), machine), pool_->size(), pool_->size() == 1 ? "" : "s");
    }
  }
  return *pool_;
}

device_record& run_context::device(int id) {
  auto it = devices_.find(id);
  if (it == devices_.end()) {
    device_record rec;
    rec.info = cuda::query_device(id);
    it = devices_.emplace(id, std::move(rec)).first;
  }
  return it->second;
}

telemetry_source& run_context::telemetry(int id) {
  auto it = telemetry_.find(id);
  if (it == telemetry_.end())
    it = telemetry_.emplace(id, open_telemetry(device(id).info.pci_bus_id)).first;
  return *it->second;
}

namespace {

/// Short, fixed-effort measurements: these are denominators, not the benchmark itself.
measure_options peak_options() {
  measure_options o;
  o.warmup = 2;
  o.min_samples = 10;
  o.max_samples = 50;
  o.min_time = 0.02;
  o.timeout = 0.5;
  return o;
}

} // namespace

std::optional<double> measured_peak(const measurement& m) {
  if (m.samples.empty() || !(m.stats.median > 0) || !(m.work.bytes > 0)) return std::nullopt;
  return m.work.bytes / m.stats.median;
}

device_record& run_context::device_with_peaks(int id, bool transfers) {
  device_record& rec = device(id);
  const bool have_transfers = rec.h2d_bytes_per_s && rec.d2h_bytes_per_s;
  // After SIGINT a measurement would stop before its first sample: skip the allocations too.
  if ((rec.d2d_bytes_per_s && (!transfers || have_transfers)) || interrupt_requested()) return rec;
  const cuda::scoped_device guard(id);
  const cuda::stream s;
  cuda::l2_flusher flusher(rec.info.l2_bytes);
  gpu_sampler sampler(s.get(), &flusher);
  const auto opts = peak_options();
  if (!rec.d2d_bytes_per_s) {
    const std::size_t bytes =
        std::min<std::size_t>(std::size_t{512} << 20, cuda::device_memory_info().free_bytes / 4);
    cuda::device_buffer<std::byte> src(bytes);
    cuda::device_buffer<std::byte> dst(bytes);
    cuda::fill_bytes_async(src.data(), 1, bytes, s.get());
    const auto m = sampler.run(
        "d2d", opts, {2.0 * static_cast<double>(bytes), 0, "bytes"},
        [&](cudaStream_t st) { cuda::copy_on_device_async(dst.data(), src.data(), bytes, st); });
    rec.d2d_bytes_per_s = measured_peak(m);
  }
  if (transfers && !have_transfers) {
    const std::size_t bytes = std::size_t{256} << 20;
    cuda::device_buffer<std::byte> dev(bytes);
    cuda::pinned_buffer<std::byte> host(bytes);
    std::fill_n(host.data(), bytes, std::byte{1});
    const auto h2d =
        sampler.run("h2d", opts, {static_cast<double>(bytes), 0, "bytes"}, [&](cudaStream_t st) {
          cuda::copy_to_device_async(dev.data(), host.data(), bytes, st);
        });
    const auto d2h =
        sampler.run("d2h", opts, {static_cast<double>(bytes), 0, "bytes"}, [&](cudaStream_t st) {
          cuda::copy_to_host_async(host.data(), dev.data(), bytes, st);
        });
    rec.h2d_bytes_per_s = measured_peak(h2d);
    rec.d2h_bytes_per_s = measured_peak(d2h);
  }
  return rec;
}

std::vector<device_record> run_context::devices_used() const {
  std::vector<device_record> out;
  for (const auto& [id, rec] : devices_) out.push_back(rec);
  return out;
}

void run_context::log_line(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

void run_context::progress(std::size_t done, std::size_t total, std::string_view label) const {
  if (opts_.verbosity < 1 || ::isatty(STDERR_FILENO) == 0) return;
  // One line, cut to the terminal's width: a line that wrapped could not be redrawn in place.
  const auto line = elided(fmt::format("[{}/{}] {}", done, total, label), output_width() - 1);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void run_context::end_progress() const {
  if (opts_.verbosity < 1 || ::isatty(STDERR_FILENO) == 0) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

} // namespace gpubench
