#pragma once
// `gpubench rerun RESULT.json`: what a result file measured (its benchmarks, points, measurement
// options and seed), read back so that it can be measured again by this build.
#include "gpubench/engine/options.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/results/result.hpp"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// Reads the result file at `path` for a rerun. usage_error (prefixed with the path) when it is not
/// a result file, has a schema other than this build's, or records no measurement options (a file
/// of a gpubench older than meta.options: the message gives its meta.argv to run instead).
run_report load_rerun_source(const std::string& path);

/// Sets every option `record` (meta.options) holds on `opts` and `device_spec`, each checked by
/// its row of the option table; a key the table lacks (a newer build's option) is a usage_error.
void apply_recorded_options(const nlohmann::json& record, common_options& opts,
                            std::string& device_spec);

/// The points `report`'s results measured, planned again by this build from their parameters on
/// their devices with `opts` (whose seed and options are the record's), each benchmark looked up
/// in `catalog`. usage_error when a result names a benchmark `catalog` lacks, or this build plans
/// its parameters into another point.
std::vector<planned_point> rerun_points(const run_report& report, const common_options& opts,
                                        std::span<const benchmark> catalog);

} // namespace gpubench
