#pragma once
// Runs planned points one after another: progress and ETA on a terminal, interruption, and the
// failure policy written once for the CLI subcommands and run files alike.
#include "gpubench/engine/benchmark.hpp"

#include <vector>

namespace gpubench {

struct planned_point {
  const benchmark* bench = nullptr;
  nlohmann::json params;
};

/// Plans every point of `b` with `values`.
std::vector<planned_point> plan_points(const benchmark& b, const param_values& values,
                                       const common_options& opts);

/// The test-only GPUBENCH_INJECT_FAULT hook (docs/reliability.md) against a whole plan:
/// usage_error unless it is unset or names a benchmark the plan runs, a point of the plan of
/// that benchmark and, for a device fault, a GPU point. execute() checks it too; the commands
/// call it once they have planned, so that a mistake is said before any device is looked for.
void check_fault_injection(const std::vector<planned_point>& points);

/// Multi-GPU: told before and after each point, to line ranks or GPU threads up
/// (barriers, start clocks). An exception from before_point stops the run and propagates.
class point_observer {
public:
  virtual ~point_observer() = default;
  virtual void before_point(std::size_t index) = 0;
  virtual void after_point(std::size_t index, result& r) = 0;
  /// A result recorded earlier for point `index` (a resumed run's journal), taken as it is: the
  /// point is not run and before_point/after_point are not called for it. nullptr: run it.
  virtual const result* recorded(std::size_t /*index*/) { return nullptr; }
};

/// Runs every point. Out-of-memory marks a point skipped (reason kept) and the run goes on; a
/// sticky CUDA error or SIGINT stops it and marks the report incomplete; a non-sticky CUDA error
/// marks the point as an error and the run goes on. The report's devices and meta are filled.
run_report execute(const std::vector<planned_point>& points, run_context& ctx,
                   const std::vector<std::string>& argv, point_observer* observer = nullptr);

/// What every point needs after its benchmark ran it: a performed check that failed makes it
/// `failed` with `plumbing.verify_failure`; the named GPU measurements get the fractions of the
/// device's peaks; the declared ratios of medians are derived. complete_declaration() wraps each
/// benchmark's run_point with it.
void complete_point(const point_plumbing& plumbing, result& r, run_context& ctx, int device);

/// Maximum number of points one invocation may run.
inline constexpr std::size_t max_points = 10000;

} // namespace gpubench
