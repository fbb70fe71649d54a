#pragma once
// The benchmarks gpubench ships. The registry sits above the engine and the workloads: a
// benchmark is its folder (lib/src/NAME/, cuda/src/NAME/) and one entry in registry.cpp. The
// engine, run files and writers take the list they are given and know no registry.
#include "gpubench/engine/benchmark.hpp"

#include <string_view>
#include <vector>

namespace gpubench {

/// Every measuring benchmark, in the order --help lists them.
const std::vector<benchmark>& all_benchmarks();
/// The shipped benchmark named `name`, or null.
const benchmark* find_benchmark(std::string_view name) noexcept;
/// Every shipped benchmark's summary_table by name, for the report writers (report.hpp).
summary_writers summary_tables();

/// One point of the shipped benchmark `name` on `device`, `values` over its defaults, run as the
/// benchmark runs it (its verification included; derived.measured_as names it): how `check` and
/// `devices --measure` measure through the benchmarks' own points.
result run_benchmark_point(std::string_view name, const param_values& values, int device,
                           run_context& ctx);

} // namespace gpubench
