// Which launcher started this process as one of several (Open MPI, PMI, PMIx, Slurm), from the
// variables each sets; read before MPI starts, in builds with and without MPI.
#include "gpubench/scale/mpi_run.hpp"

#include <charconv>
#include <string_view>

namespace gpubench {

namespace {

std::optional<int> positive_int(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string_view s(text);
  int v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 1) return std::nullopt;
  return v;
}

} // namespace

std::optional<launcher_info> detect_launcher(const env_lookup& env) {
  const auto pick = [&](const char* name, const char* size_var) -> std::optional<launcher_info> {
    const auto size = positive_int(env(size_var));
    if (!size || *size < 2) return std::nullopt;
    return launcher_info{name, *size};
  };
  if (auto l = pick("Open MPI", "OMPI_COMM_WORLD_SIZE")) return l;
  if (auto l = pick("PMI", "PMI_SIZE")) return l;
  if (auto l = pick("PMIx", "PMIX_SIZE")) return l;
  // srun sets the step's task count; an sbatch script itself (no srun) is one process.
  if (env("SLURM_PROCID") != nullptr) {
    if (auto l = pick("Slurm", "SLURM_STEP_NUM_TASKS")) return l;
    if (env("SLURM_STEP_ID") != nullptr)
      if (auto l = pick("Slurm", "SLURM_NTASKS")) return l;
  }
  return std::nullopt;
}

} // namespace gpubench
