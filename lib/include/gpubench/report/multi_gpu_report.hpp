#pragma once
// Multi-GPU (docs/multi-gpu.md): how report, compare and the writers show a merged
// report: the rank beside each result, the rank records and one row per aggregate.
#include "gpubench/report/report.hpp"
#include "gpubench/results/result.hpp"

#include <iosfwd>
#include <optional>
#include <string>

namespace gpubench {

/// " rank N (host)" for a result of a merged report, "" otherwise.
std::string rank_suffix(const result& r);

/// After the per-result rows (table and md): the ranks and the aggregates; nothing for a
/// single-GPU report or another format.
void write_multi_gpu_summary(std::ostream& os, const run_report& rep, output_format f);

/// Why two reports are jobs of different shapes (rank count, nodes, the GPU of each rank), or
/// nullopt when they match; compare refuses such pairs unless --force.
std::optional<std::string> job_shape_mismatch(const run_report& base, const run_report& next);

} // namespace gpubench
