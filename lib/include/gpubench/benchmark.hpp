#pragma once
// A benchmark declares its parameters once; the CLI turns them into --options, run files use the
// same names, and the runner (runner.hpp) expands sweeps, runs points and handles failures for all.
#include "gpubench/context.hpp"
#include "gpubench/result.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

struct param_spec {
  std::string name;          ///< option name without dashes, also the run-file key
  std::string help;          ///< one line for --help
  std::string default_value; ///< as text; "" means unset
  bool sweepable = false;    ///< accepts a list/range (makes a sweep)
};

/// Parameter values as text, exactly as written on the command line ("1M:1G:x4", "f32,f16").
using param_values = std::map<std::string, std::string, std::less<>>;

struct benchmark {
  std::string name;
  std::string summary;  ///< one line
  std::string examples; ///< shown at the end of --help
  std::vector<param_spec> params;
  bool supports_cpu_only = true;

  /// Validates the values (usage_error naming the option) and expands every combination of the
  /// list-valued ones into points, each a JSON object of concrete parameters.
  std::function<std::vector<nlohmann::json>(const param_values&, const common_options&)> plan;
  /// Runs one point: allocates, verifies, measures. Throws cuda errors; the runner records them.
  /// The runner adds the key "device" to every point (the GPU to use, -1 with --cpu-only; read it
  /// with point_device()) and moves it from the result's params to result::device afterwards.
  std::function<result(const nlohmann::json& point, run_context&)> run_point;
  /// Optional extra table after the per-result blocks (e.g. one row per batch size).
  std::function<void(std::ostream&, const std::vector<const result*>&)> summary_table;
};

/// The GPU a point runs on (-1: CPU only).
int point_device(const nlohmann::json& point);

/// Every measuring benchmark, in the order --help lists them.
const std::vector<benchmark>& all_benchmarks();
const benchmark* find_benchmark(std::string_view name) noexcept;

/// Fills in the default of every parameter the user left unset; rejects unknown names.
param_values with_defaults(const benchmark& b, const param_values& given);

/// Looks up a value that with_defaults() guaranteed to exist.
const std::string& value_of(const param_values& v, std::string_view name);

} // namespace gpubench
