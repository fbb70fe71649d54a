#pragma once
// `gpubench pipeline`: stage A and stage B of each step run serially, on two streams, as a CUDA
// graph and (augment-train) with stage A on CPU threads; steps/s per mode against the ideal
// overlap, and the trained weights of every mode checked bitwise against serial's.
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/pipeline/pipeline.hpp"
#include "gpubench/results/result.hpp"

#include <map>

namespace gpubench {

benchmark make_pipeline_benchmark();

/// pipeline's parameters: the CLI options, run-file keys and point keys, with their defaults.
const std::vector<param_spec>& pipeline_param_table();

/// The settings of a planned point (the inverse of what the plan writes); a key the point lacks
/// takes the table's default.
pipeline_config pipeline_config_from_point(const point_view& point);

/// The derived figures of a point from its measurements (seconds per step): stage balance, ideal
/// speedup, per mode steps/s, images/s, host time, speedup over serial and overlap efficiency.
void derive_pipeline_figures(result& r, const pipeline_config& cfg, const stage_work& w,
                             const std::map<pipeline_mode, double>& host_per_step);

/// Test hook (test_hooks.hpp, corrupt_for_test): a point with this key set to a mode name has one
/// bit of that mode's trained weights flipped before the bitwise comparison (the check must then
/// fail).
inline constexpr const char* pipeline_corrupt_key = test_corrupt_key;

} // namespace gpubench
