#include "gpubench/engine/phases.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/energy_sampler.hpp"
#include "gpubench/engine/sampler_frame.hpp"
#include "gpubench/telemetry/energy.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

namespace gpubench {

namespace {

/// The energy options a run asked for: --energy-window and --energy-windows.
energy_options energy_options_for(const measure_options& m) {
  energy_options o;
  o.min_window_s = m.energy_window;
  o.windows = m.energy_windows;
  return o;
}

} // namespace

verification checked_run(cudaStream_t stream, const std::vector<poison_target>& targets,
                         const std::function<void(cudaStream_t)>& body,
                         const std::function<verification()>& compare) {
  for (const auto& t : targets) {
    if (t.bytes == 0) continue;
    if (t.on_device)
      cuda::fill_bytes_async(t.data, 0xFF, t.bytes, stream);
    else
      std::memset(t.data, 0xFF, t.bytes);
  }
  body(stream);
  cuda::synchronize(stream);
  return compare();
}

namespace {

/// "elements" -> "element": one operation of the energy row.
std::string one_of(const std::string& unit) {
  return unit.size() > 1 && unit.back() == 's' ? unit.substr(0, unit.size() - 1) : unit;
}

} // namespace

void measure_row(result& r, row_sampler& sampler, const common_options& opts, const gpu_row& row) {
  if (interrupt_requested()) return;
  measurement m = sampler.run(row.name, opts.measure, row.work, row.body, row.kind);
  if (row.finish) row.finish(m);
  r.measurements.push_back(std::move(m));
  const work_counts w = r.measurements.back().work; // a copy: the extra rows grow the vector
  if (row.energy) {
    const double ops = row.energy_ops > 0 ? row.energy_ops : w.items;
    add_gpu_energy(r, row.name, sampler, opts, row.energy_body ? row.energy_body : row.body, ops,
                   row.energy_unit.empty() ? one_of(w.item_unit) : row.energy_unit,
                   row.energy_per_byte && ops > 0 ? w.bytes / ops : 0);
  }
  if (row.extra_rows) measure_gpu_extra_rows(r, sampler, row.name, opts.measure, w, row.body);
}

gpu_row plain_gpu_row(std::string name, work_counts work, std::function<void(cudaStream_t)> body,
                      body_kind kind) {
  gpu_row row;
  row.name = std::move(name);
  row.work = std::move(work);
  row.body = std::move(body);
  row.kind = kind;
  row.extra_rows = false;
  row.energy = false;
  return row;
}

void measure_gpu_extra_rows(result& r, row_sampler& sampler, const std::string& name,
                            const measure_options& opts, const work_counts& work,
                            const std::function<void(cudaStream_t)>& body) {
  if (opts.batch_time > 0 && !interrupt_requested())
    r.measurements.push_back(sampler.run_batch(name + " (batch)", opts, work, body));
  if (opts.timestamps && !interrupt_requested()) {
    std::string why;
    if (auto m = sampler.run_timestamps(name + " (timestamps)", opts, work, body, why)) {
      r.measurements.push_back(std::move(*m));
    } else {
      static std::atomic<bool> told{false};
      if (!told.exchange(true))
        std::fprintf(stderr, "gpubench: warning: --timestamps: no '(timestamps)' rows: %s\n",
                     why.c_str());
    }
  }
}

void add_gpu_energy(result& r, const std::string& name, row_sampler& sampler,
                    const common_options& opts, const std::function<void(cudaStream_t)>& body,
                    double ops_per_launch, const std::string& op_unit, double bytes_per_op) {
  if (!opts.energy || interrupt_requested()) return;
  const auto row = std::find_if(r.measurements.begin(), r.measurements.end(),
                                [&](const measurement& m) { return m.name == name; });
  if (row == r.measurements.end()) return;
  const auto dev = make_cuda_frame_device(nullptr, nullptr);
  sampler_frame frame(*dev, sampler.stream(), l2_flush_mode::none, back_to_back_steps());
  const std::string gate = name + " (energy)";
  telemetry_source* t = sampler.telemetry();
  row->energy = measure_gpu_energy(t != nullptr ? t->monitor() : nullptr,
                                   t != nullptr ? t->unavailable_reason() : "no telemetry source",
                                   frame, gate, body, ops_per_launch, op_unit, bytes_per_op,
                                   energy_options_for(opts.measure));
  frame.finish(gate); // the gate, where the energy could not be measured on this GPU
}

void add_cpu_energy(measurement& m, const common_options& opts, const std::function<void()>& body,
                    double ops_per_call, const std::string& op_unit) {
  if (!opts.energy || interrupt_requested()) return;
  m.energy = measure_cpu_energy(body, ops_per_call, op_unit, energy_options_for(opts.measure));
}

void measure_cpu(result& r, const std::string& name, const measure_options& opts, work_counts work,
                 const std::function<void()>& body) {
  if (interrupt_requested()) return;
  r.measurements.push_back(measure_host(name, opts, std::move(work), body));
}

} // namespace gpubench
