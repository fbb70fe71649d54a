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

/// Appends a GPU measurement to `r` unless SIGINT came first; `kind` says whether the body can be
/// timed behind the blocking kernel (measure.hpp).
void measure_gpu(result& r, gpu_sampler& sampler, const std::string& name,
                 const measure_options& opts, work_counts work,
                 const std::function<void(cudaStream_t)>& body,
                 body_kind kind = body_kind::asynchronous);

/// The rows the options add beside a per-launch GPU row `name`: '<name> (batch)' with
/// --batch-time, '<name> (timestamps)' with --timestamps (when CUPTI cannot trace, a warning on
/// stderr, once per process, says why instead). None after SIGINT.
void measure_gpu_extra_rows(result& r, gpu_sampler& sampler, const std::string& name,
                            const measure_options& opts, const work_counts& work,
                            const std::function<void(cudaStream_t)>& body);

/// --energy on the GPU row `name` of `r`: the energy per operation of `body` run back to back on
/// the sampler's stream, read from the sampler's telemetry (energy.hpp), into that row's
/// "energy". Nothing without --energy, after SIGINT, or when `r` has no row `name` (a row
/// interrupted before its first sample). The energy strategy passes the --concurrent start gate
/// as '<name> (energy)', so the windows of every GPU begin together. `bytes_per_op` > 0 adds
/// bytes per joule.
void add_gpu_energy(result& r, const std::string& name, gpu_sampler& sampler,
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
