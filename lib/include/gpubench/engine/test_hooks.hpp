#pragma once
// The test-only hooks, behind one seam. The first two are read from the environment once, the
// first time the seam is asked (plan_points() asks before anything runs), and all are compiled in
// so that the CLI tests exercise the shipped binary:
// - GPUBENCH_TEST_SLOWDOWN="<measurement>:<fraction>" adds a calibrated GPU delay to every GPU
//   measurement of that name, so the regression gate's detection rate can be measured
//   (docs/ci.md). The delay is enqueued as part of that measurement's body, decided once before
//   its samples; a run that has it says so in its meta.
// - GPUBENCH_INJECT_FAULT=BENCHMARK:POINT[:KIND] makes a fault happen at the start of one point
//   of the plan (docs/reliability.md).
// - GPUBENCH_MPI_TEST_FAIL=RANK:POINT[:abort|stall] makes one rank of an MPI run crash or hang
//   before a point (docs/multi-gpu.md); the MPI run parses it when it starts.
// - A point's key "corrupt_weights_of" (set by GPU tests only; no parameter table declares it, so
//   neither the command line nor a run file can) flips one bit of a checked run's output.
#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

struct planned_point;
class run_context;

struct test_slowdown {
  std::string measurement;
  double fraction = 0; ///< the delay as a fraction of the measurement's own median
};

/// Parses "<measurement>:<fraction>" (fraction in (0, 10], "0.1" or "10%"); usage_error otherwise.
test_slowdown parse_test_slowdown(std::string_view text);

/// GPUBENCH_INJECT_FAULT's KIND: illegal_address (the default) launches a kernel that faults on
/// the point's device; bad_alloc throws std::bad_alloc as a failed host allocation would;
/// thread_start restarts the CPU thread pool with its second thread failing to start (as under
/// `ulimit -u` or a pids limit).
enum class fault_kind { illegal_address, bad_alloc, thread_start };
struct injected_fault {
  std::string benchmark;
  std::size_t point = 0; ///< 1-based, in the run's plan
  fault_kind kind = fault_kind::illegal_address;
};

/// Parses "BENCHMARK:POINT[:KIND]"; usage_error naming the variable otherwise (an unknown
/// benchmark included).
injected_fault parse_injected_fault(std::string_view text);

/// GPUBENCH_MPI_TEST_FAIL=RANK:POINT[:abort|stall] (docs/multi-gpu.md): before the POINT-th
/// point (1-based) rank RANK aborts (a crashed rank) or stops answering (a hung one).
struct injected_rank_failure {
  int rank = -1;
  std::size_t point = 0;
  bool stall = false;
};

/// Parses the variable's value (nothing when empty); usage_error naming it otherwise.
std::optional<injected_rank_failure> parse_rank_failure(std::string_view text);

/// The hooks of this process.
struct test_hooks {
  std::optional<test_slowdown> slowdown;
  std::string slowdown_text; ///< GPUBENCH_TEST_SLOWDOWN as given ("" when unset)
  std::optional<injected_fault> fault;
};

/// The hooks from the environment, read and parsed once (a malformed one throws usage_error at
/// each call, so the first caller reports it).
const test_hooks& test_hooks_from_env();

/// The slowdown's text as recorded in a result's meta ("" when unset).
std::string test_slowdown_text();

/// GPUBENCH_TEST_SLOWDOWN: when the knob names `measurement`, `body` followed by a delay kernel of
/// the knob's fraction of the median of `probe()` (a few samples of `body` taken as the
/// measurement takes them, so one knob value means the same relative slowdown for every point);
/// otherwise `body` itself, and `probe` is not called.
std::function<void(cudaStream_t)>
test_slowdown_body(std::string_view measurement, const std::function<void(cudaStream_t)>& body,
                   const std::function<std::vector<double>()>& probe);

/// GPUBENCH_INJECT_FAULT against a whole plan: the benchmark must be one the plan runs, the point
/// must exist, belong to it and run on a GPU (for a device fault); usage_error otherwise. Nothing
/// without the hook. execute() checks it too; the commands call it once they have planned, so that
/// a mistake is said before any device is looked for.
void check_fault_injection(const std::vector<planned_point>& points);

/// Makes the hook's fault happen when `index` (1-based) is its point; nothing otherwise.
void inject_fault_at(std::size_t index, const planned_point& p, run_context& ctx);

/// The key of a point that names the output a checked run must see corrupted.
inline constexpr const char* test_corrupt_key = "corrupt_weights_of";
/// Flips one bit of the middle value of `values` when `point[test_corrupt_key]` is `what`, so that
/// the check that follows must fail; nothing otherwise (and nothing for an empty span).
void corrupt_for_test(const nlohmann::json& point, std::string_view what, std::span<float> values);

} // namespace gpubench
