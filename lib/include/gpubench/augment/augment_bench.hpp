#pragma once
// `gpubench augment`: the augmentation pipeline (crop, resize, rotate, blur, normalize) on a batch
// of uint8 images, CPU reference vs GPU staged (one kernel per op) vs GPU fused (one pass).
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/engine/benchmark.hpp"

#include <iosfwd>
#include <vector>

namespace gpubench {

benchmark make_augment_benchmark();

/// augment's parameters: the CLI options, run-file keys and point keys, with their defaults.
const std::vector<param_spec>& augment_param_table();

/// The settings of a planned point (the inverse of what the plan writes); a key the point lacks
/// takes the table's default.
augment_config augment_config_from_point(const point_view& point);

/// The checks that span parameters, and the canonical forms of height, width, sigma, mean, std
/// (the benchmark's finish_point).
void finish_augment_point(nlohmann::json& p, const nlohmann::json& all, const common_options& opts);

/// The settings `gpubench augment` runs with when given no option (pipeline's stage A uses them).
augment_config default_augment_config();

/// The summary under augment's table: per batch, images/s of each implementation, the speedups
/// (against the fastest CPU row) and the verification.
void write_augment_summary(std::ostream& os, const std::vector<const result*>& results);

} // namespace gpubench
