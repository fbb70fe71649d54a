#pragma once
// What the phases of every benchmark's point have in common, written once: a checked run against
// poisoned outputs, and measurements that stop for SIGINT and land in the point's result. The
// runner (runner.cpp) does the rest after the point: the verdict of a failed check, peak
// fractions and ratios (benchmark.hpp).
#include "gpubench/engine/measure.hpp"
#include "gpubench/engine/options.hpp"
#include "gpubench/results/result.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace gpubench {

/// Memory a checked run fills with all-ones bytes first (NaN in every float type), so that an
/// element the code under test fails to write cannot pass the comparison.
struct poison_target {
  void* data = nullptr;
  std::size_t bytes = 0;
  bool on_device = true;
};

/// Poisons `targets` (device ones on `stream`), runs `body` on `stream` (it copies the outputs
/// to where `compare` reads them), waits for the stream and returns `compare()`.
verification checked_run(cudaStream_t stream, const std::vector<poison_target>& targets,
                         const std::function<void(cudaStream_t)>& body,
                         const std::function<verification()>& compare);

/// One GPU row as a driver declares it: what one launch of `body` does, how it may be timed,
/// and which rows beside it the options may ask for. measure_row() measures them all.
struct gpu_row {
  std::string name;
  work_counts work; ///< the work of one launch of `body`
  std::function<void(cudaStream_t)> body;
  /// Whether `body` can be timed behind the blocking kernel (measure.hpp).
  body_kind kind = body_kind::asynchronous;
  /// '(batch)' and '(timestamps)' rows beside it when the options ask: rows of a kernel. false
  /// for a transfer or a body that waits on the host.
  bool extra_rows = true;
  /// --energy on this row: the energy per operation of `energy_body` (`body` when empty) run back
  /// to back, `energy_ops` operations a launch (0: work.items) of `energy_unit` ("": the work's
  /// unit without its plural s), per byte too when `energy_per_byte`.
  bool energy = true;
  std::string energy_unit;
  double energy_ops = 0;
  bool energy_per_byte = false;
  std::function<void(cudaStream_t)> energy_body;
  /// Applied to the row once it is measured, before its energy and extra rows (the pipeline's
  /// samples of several steps made per step).
  std::function<void(measurement&)> finish;
};

/// The one call that measures a GPU row: the row itself, then its energy with --energy, then its
/// '(batch)' and '(timestamps)' rows with --batch-time and --timestamps, each into `r`, nothing
/// after SIGINT.
void measure_row(result& r, row_sampler& sampler, const common_options& opts, const gpu_row& row);

/// A transfer or host-paced row: measured alone, no energy, no extra rows.
gpu_row plain_gpu_row(std::string name, work_counts work, std::function<void(cudaStream_t)> body,
                      body_kind kind = body_kind::asynchronous);

/// The rows the options add beside a per-launch GPU row `name`: '<name> (batch)' with
/// --batch-time, '<name> (timestamps)' with --timestamps (when CUPTI cannot trace, a warning on
/// stderr, once per process, says why instead). None after SIGINT.
void measure_gpu_extra_rows(result& r, row_sampler& sampler, const std::string& name,
                            const measure_options& opts, const work_counts& work,
                            const std::function<void(cudaStream_t)>& body);

/// --energy on the GPU row `name` of `r`: the energy per operation of `body` run back to back on
/// the sampler's stream, read from the sampler's telemetry (energy.hpp), into that row's
/// "energy". Nothing without --energy, after SIGINT, or when `r` has no row `name` (a row
/// interrupted before its first sample). The energy strategy passes the --concurrent start gate
/// as '<name> (energy)', so the windows of every GPU begin together. `bytes_per_op` > 0 adds
/// bytes per joule.
void add_gpu_energy(result& r, const std::string& name, row_sampler& sampler,
                    const common_options& opts, const std::function<void(cudaStream_t)>& body,
                    double ops_per_launch, const std::string& op_unit, double bytes_per_op = 0);

/// --energy on a CPU row: the energy per operation of `body` from RAPL where the host exposes it
/// (energy.hpp), into `m`. Nothing without --energy or after SIGINT.
void add_cpu_energy(measurement& m, const common_options& opts, const std::function<void()>& body,
                    double ops_per_call, const std::string& op_unit);

/// Appends a host measurement to `r` unless SIGINT came first.
void measure_cpu(result& r, const std::string& name, const measure_options& opts, work_counts work,
                 const std::function<void()>& body);

} // namespace gpubench
