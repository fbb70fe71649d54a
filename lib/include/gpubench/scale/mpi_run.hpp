#pragma once
// MPI (docs/multi-gpu.md): under mpirun or srun every rank runs the same plan on its own
// GPU, the ranks meet before each point, and rank 0 gathers the runs into one merged report that
// it alone prints and writes. Every exchange has a deadline: a rank that stops answering is
// reported by rank 0, which then ends the job (MPI_Abort) instead of hanging.
#include "gpubench/engine/runner.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

/// Whether this build has MPI support, and a one-line description for --version.
bool mpi_built_in() noexcept;
std::string mpi_description();

/// The launcher a process was started by, read from its environment.
struct launcher_info {
  std::string name; ///< "Open MPI", "Slurm", "PMI"
  int size = 1;     ///< processes in the job
};
using env_lookup = std::function<const char*(const char*)>;
/// mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_...), srun (SLURM_NTASKS with SLURM_PROCID);
/// nullopt when the process was not started by one, or as a job of one process.
std::optional<launcher_info> detect_launcher(const env_lookup& env);

struct mpi_options {
  /// Deadline of every exchange between ranks, in seconds (--mpi-timeout).
  double timeout_s = 600;
  /// --device given explicitly: every rank uses it; otherwise a rank takes its node-local rank
  /// modulo the devices it sees (CUDA_VISIBLE_DEVICES applies).
  bool device_given = false;
};

/// The MPI job this process belongs to, started on first use when a launcher is detected.
/// Throws usage_error when launched with more than one process by a build without MPI.
class mpi_job;
mpi_job* current_mpi_job();

/// Sets opts.devices for this rank (see mpi_options::device_given).
void pick_rank_device(mpi_job& job, common_options& opts, const mpi_options& mopts);

/// Runs the plan as one rank: barrier and clock stamp before each point, then rank 0 gathers.
/// Returns the merged report on rank 0, nullopt on the others (which print nothing).
std::optional<run_report> execute_mpi(mpi_job& job, const std::vector<planned_point>& points,
                                      run_context& ctx, const std::vector<std::string>& argv,
                                      const mpi_options& mopts, bool needs_gpu);

/// After rank 0 has printed and written the report: when a rank was lost, ends the whole job
/// with a message (MPI_Abort; the lost rank would otherwise keep MPI_Finalize waiting).
void end_mpi_job(mpi_job& job, int exit_code);
/// This process's rank in the job.
int mpi_rank(const mpi_job& job);

} // namespace gpubench
