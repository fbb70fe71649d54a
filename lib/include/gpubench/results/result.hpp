#pragma once
// The result model behind every report format and the JSON schema gpubench/1 (docs/json-schema.md).
#include "gpubench/cuda/device_info.hpp"
#include "gpubench/results/measurement.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

inline constexpr std::string_view schema_id = "gpubench/1";

/// Outcome of comparing a GPU output with the CPU reference, element by element.
struct verification {
  bool performed = false;
  bool passed = false;
  std::string method;   ///< e.g. "exact", "abs <= 1 ulp of f16"
  double tolerance = 0; ///< absolute tolerance used (0 for exact)
  double max_abs_error = 0;
  std::uint64_t checked = 0; ///< elements compared (all outputs of all checked phases)
  std::uint64_t mismatches = 0;
  /// Per-phase or per-implementation details (what was checked, first mismatch...).
  nlohmann::json details = nlohmann::json::object();

  [[nodiscard]] double within_tolerance_fraction() const noexcept {
    return checked == 0 ? 0.0
                        : 1.0 - static_cast<double>(mismatches) / static_cast<double>(checked);
  }
  /// Folds another check into this one (all must pass).
  void merge(const verification& other, const std::string& label);
};

/// ok: measured; failed: measured but verification failed; skipped: not run, with a reason
/// (out of memory, unsupported); error: a CUDA error stopped it.
enum class result_status { ok, failed, skipped, error };
std::string_view to_string(result_status s) noexcept;
std::optional<result_status> parse_result_status(std::string_view s) noexcept;

struct result {
  std::string benchmark;
  int device = -1; ///< -1 for CPU-only results
  nlohmann::json params = nlohmann::json::object();
  std::vector<measurement> measurements;
  nlohmann::json derived = nlohmann::json::object(); ///< name -> number (speedups, fractions)
  verification verify;
  result_status status = result_status::ok;
  std::string reason; ///< why skipped/failed/error
  // Multi-GPU (docs/multi-gpu.md): which rank (MPI process, or GPU thread of
  // --concurrent) measured it and on which host; -1 and "" in a single-GPU run.
  int rank = -1;
  std::string host;

  [[nodiscard]] bool converged() const noexcept;
  [[nodiscard]] const measurement* find(std::string_view name) const noexcept;
};

/// A device as recorded in a report: its properties and, when measured, its practical peaks.
struct device_record {
  cuda::device_info info;
  std::optional<double> d2d_bytes_per_s; ///< cudaMemcpy D2D, read + write counted
  std::optional<double> h2d_bytes_per_s; ///< pinned
  std::optional<double> d2h_bytes_per_s; ///< pinned
};

struct host_info {
  std::string name;
  std::string cpu_model;
  int cores = 0;        ///< the machine's hardware threads
  int cores_usable = 0; ///< those this process may run on (its CPU affinity); 0: not recorded
};

struct run_meta {
  std::string version;
  std::string git;
  /// SHA-256 of the sources the binary was built from (meta.build.source_sha256); "" in files
  /// written before it was recorded.
  std::string source_hash;
  std::vector<std::string> argv;
  std::string started_at; ///< UTC, ISO 8601
  host_info host;
  std::string cuda_driver;
  std::string cuda_runtime;
  std::string nvidia_driver; ///< the driver's own version ("580.65.06"); empty when unknown
  bool incomplete = false;
  std::string incomplete_reason;
  std::string test_slowdown; ///< GPUBENCH_TEST_SLOWDOWN when set (test-only; docs/ci.md)
  /// --resume (journal.hpp): when the run was resumed (UTC, ISO 8601; "" if it was not) and how
  /// many of its points came from the journal of the killed run.
  std::string resumed_at;
  std::size_t resumed_points = 0;
  /// The effective value of every measurement option (option_table.hpp), as a run file's
  /// "options" writes them; null in files written before results recorded them.
  nlohmann::json options;
};

struct run_report {
  run_meta meta;
  std::vector<device_record> devices;
  std::vector<result> results;
  // Multi-GPU (docs/multi-gpu.md): one record per rank and the aggregates across ranks
  // and nodes of a concurrent or MPI run; null in a single-GPU run. Kept as JSON: written by
  // multi_gpu_merge.cpp, read back as they are.
  nlohmann::json ranks;
  nlohmann::json aggregate;
};

/// Adds the measurement's bandwidth as fractions of `dev`'s theoretical peak and, when measured,
/// of its D2D copy peak (rates fraction_of_theoretical_peak, fraction_of_measured_peak).
void add_peak_fractions(measurement& m, const device_record& dev);

/// The SM clock a GPU row ran at (MHz): the median the GPU counted across its samples, else
/// NVML's median reading during the row; 0 when neither was recorded.
double counted_sm_clock_mhz(const measurement& m);

/// Where the row declares its FLOPs and the rate of the units they run on: the roof at its
/// arithmetic intensity, the lower of that compute peak (at counted_sm_clock_mhz) and intensity x
/// the bandwidth peak, and the fraction of it the row reached (rates roof_flops_per_s,
/// fraction_of_roof; docs/roofline.md). Nothing otherwise.
void add_roof_fraction(measurement& m, const device_record& dev);

nlohmann::json to_json(const run_report& r);
nlohmann::json to_json(const measurement& m);

/// Reads a saved report; throws usage_error naming the JSON path and what was expected.
run_report report_from_json(const nlohmann::json& j);

/// Process exit code a finished run deserves (0, 1 or 130; CUDA errors are thrown instead).
int exit_code_for(const run_report& r);

} // namespace gpubench
