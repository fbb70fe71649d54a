// Multi-GPU (docs/multi-gpu.md): one run alone, on every GPU at once, or as one rank of
// an MPI job; whichever it is, one report is emitted (by rank 0 alone under MPI).
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/results/output_lock.hpp"
#include "gpubench/scale/multi_gpu_concurrent.hpp"

#include <fmt/format.h>

namespace gpubench::app {

void check_resume(const common_options& opts, bool under_mpi) {
  if (!opts.resume) return;
  if (opts.output_path.empty() || opts.output_path == "-")
    throw usage_error("--resume needs --output FILE: the journal it continues is FILE.journal");
  if (under_mpi || opts.concurrent)
    throw usage_error(fmt::format("--resume does not apply {}: the points of every {} are merged "
                                  "only at the end, so no journal is kept (docs/multi-gpu.md)",
                                  under_mpi ? "under MPI" : "with --concurrent",
                                  under_mpi ? "rank" : "GPU thread"));
}

int run_and_emit(const std::vector<planned_point>& points, const common_options& opts,
                 const std::vector<std::string>& argv, mpi_job* job, bool needs_gpu,
                 const report_emitter& emit) {
  const auto deliver = [&](run_report report) {
    return emit ? emit(report) : emit_report(report, opts);
  };
  check_resume(opts, job != nullptr);
  // One writer per output, from the first point to the final write (rank 0 writes an MPI job's).
  const output_lock lock = job == nullptr || mpi_rank(*job) == 0
                               ? output_lock(opts.output_path, "--output")
                               : output_lock();
  if (job != nullptr) {
    if (opts.concurrent)
      throw usage_error("--concurrent does not apply under MPI: each rank runs one GPU; start "
                        "one rank per GPU instead (docs/multi-gpu.md)");
    common_options mine = opts;
    if (mpi_rank(*job) != 0) mine.verbosity = 0; // rank 0 speaks for the job
    run_context ctx(mine);
    auto report = execute_mpi(*job, points, ctx, argv, {opts.sync_timeout, false}, needs_gpu);
    if (!report) return exit_code::success; // rank 0 reports this rank's outcome
    const int code = deliver(std::move(*report));
    end_mpi_job(*job, code);
    return code;
  }
  if (opts.concurrent) {
    if (opts.measure.timestamps)
      throw usage_error("--timestamps does not apply with --concurrent: CUPTI traces the whole "
                        "process, so one GPU's samples would hold the others' work");
    concurrent_options c;
    c.barrier_timeout_s = opts.sync_timeout;
    return deliver(execute_concurrent(points, opts, argv, c));
  }
  if (!emit && !opts.output_path.empty() && opts.output_path != "-")
    return run_journaled(points, opts, argv);
  run_context ctx(opts);
  return deliver(execute(points, ctx, argv));
}

} // namespace gpubench::app
