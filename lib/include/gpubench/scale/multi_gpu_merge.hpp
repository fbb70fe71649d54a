#pragma once
// Multi-GPU results (docs/multi-gpu.md): the runs of several ranks (MPI processes, or the
// GPU threads of --concurrent) merged into one report, with one record per rank and aggregates per
// point and measurement across ranks and nodes. Host code only: unit-tested without a GPU.
#include "gpubench/results/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

/// Who a rank is and what it ran on.
struct rank_record {
  int rank = 0;
  std::string host;
  int local_rank = 0;    ///< index among the ranks of its host
  int local_device = -1; ///< CUDA ordinal as the rank saw it (-1: CPU only)
  std::string gpu_name;
  std::string uuid;
  std::string pci_bus_id;
  std::string status = "ok"; ///< ok, error (could not run: no GPU...), lost (stopped answering)
  std::string reason;
  std::optional<double> clock_offset_s; ///< its clock minus rank 0's (MPI), when measured
  std::optional<double> clock_rtt_s;    ///< round trip of the exchange that measured it
  int cores_usable = 0; ///< MPI: the CPUs the rank may run on (its binding); 0 where not recorded
};

/// One rank's part: its record, its report, and when each point started by rank 0's clock
/// (seconds, from the clock of rank 0; absent where unknown).
struct rank_run {
  rank_record who;
  run_report report;
  std::vector<std::optional<double>> point_start_s;
};

/// Start skew of each (point index, measurement) in a concurrent run, and the clock it came from.
struct measurement_skews {
  std::vector<std::map<std::string, double>> per_point;
  std::string clock; ///< "gpu_globaltimer" or "host"
};

/// The aggregate of one measurement across the members that measured it (docs/multi-gpu.md):
/// the sum, min, median and max of each rate, the min, median and max of the median time, and
/// the straggler ratio (slowest median time over the median of the median times).
nlohmann::json aggregate_measurement(const std::vector<const measurement*>& members,
                                     const std::vector<std::string>& hosts);

/// Merges the ranks' runs: results interleaved point by point (each with rank and host),
/// devices deduplicated by host and PCI bus id, ranks sharing a GPU flagged, aggregates added.
/// `mode` is "concurrent" or "mpi". The meta is rank 0's (the first run's), incomplete when any
/// rank's run is or any rank is not ok.
run_report merge_rank_runs(std::vector<rank_run> runs, const std::string& mode,
                           const measurement_skews& skews = {});

/// The record of a rank as JSON (the "ranks" array of a merged report) and back.
nlohmann::json to_json(const rank_record& r);
rank_record rank_record_from_json(const nlohmann::json& j);

} // namespace gpubench
