#pragma once
// Internal to gate/: compare's sides as environments (compare_environment.cpp).
#include "gpubench/gate/compare.hpp"

#include <span>
#include <string>

namespace gpubench::gate_detail {

/// The GPU model of device `id` of a run ("cpu" for host rows).
std::string device_name(const run_report& r, int id);
/// What the files of one side recorded: GPUs, drivers, code, telemetry flags, clocks.
side_environment environment_of(std::span<const result_file> files, std::size_t runs);
/// Refuses what is not comparable (exit 2) unless forced; forced differences become warnings.
void check_environments(comparison& c, const compare_options& opts);

} // namespace gpubench::gate_detail
