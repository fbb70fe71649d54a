#pragma once
// `gpubench augment`: the augmentation pipeline (crop, resize, rotate, blur, normalize) on a batch
// of uint8 images, CPU reference vs GPU staged (one kernel per op) vs GPU fused (one pass).
#include "gpubench/augment_params.hpp"
#include "gpubench/benchmark.hpp"

namespace gpubench {

benchmark make_augment_benchmark();

/// The settings of a planned point (the inverse of what the plan writes).
augment_config augment_config_from_point(const nlohmann::json& point);

} // namespace gpubench
