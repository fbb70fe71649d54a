#pragma once
// --dry-run's listing, the same for every measuring subcommand and for run files: each point that
// would run, with the device memory it needs, and nothing touches a GPU.
#include "gpubench/engine/runner.hpp"
#include "gpubench/report/report.hpp"

#include <iosfwd>
#include <string_view>
#include <vector>

namespace gpubench {

/// A numbered table ("TITLE: N points would run", one line per point), or with `json` a document
/// {"name": TITLE, "points": [{"benchmark", "params", "device_bytes" (when known)}]}.
void write_plan(std::ostream& os, std::string_view title, const std::vector<planned_point>& points,
                output_format format);

} // namespace gpubench
