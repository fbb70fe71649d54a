#pragma once
// The suite `gpubench check` runs on each GPU (docs/check.md): one point per group of checks,
// each measured by the engine as the benchmarks measure it (stream, roofline and gemm run their
// own points), judged on the rank that measured it against the reference, and measured again
// once before a figure fails. The state of the GPU comes from NVML (telemetry/gpu_state.hpp).
#include "gpubench/check/check.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/telemetry/gpu_state.hpp"

#include <memory>

namespace gpubench {

struct check_setup {
  bool quick = false;
  /// --reference FILE; empty models: the shipped references alone.
  reference_set references;
};

/// The `check` benchmark: parameter `check` (the suite's points, check_points()), run_point
/// measuring and judging one point. Not in the registry: `gpubench check` plans it.
benchmark make_check_benchmark(const std::shared_ptr<const check_setup>& setup);

/// The state rules (docs/check.md, "The GPU's state"): the PCIe link against what the GPU and
/// slot support, ECC errors, remapped rows, the power limit, persistence and MIG mode, the
/// temperature. With NVML missing, one not_run outcome that says the state was not checked.
std::vector<check_outcome> judge_state(const gpu_state& s);

/// Judges every check of the suite's point `point` on the rows of `r`, a result measured on a GPU
/// of properties `info` and highest SM clock `max_sm_mhz` (the compute checks' theoretical
/// figures; none known: those cannot be judged against theory): against `references` (from
/// --reference; their source names it) where it has the check for the model, else the shipped
/// reference, else the theoretical figure. Pure: the suite judges what it measures with it, and
/// `check --from` judges saved results again.
std::vector<check_outcome> judge_point(std::string_view point, const result& r,
                                       const cuda::device_info& info,
                                       std::optional<double> max_sm_mhz,
                                       const reference_set& references);

/// Theoretical PCIe bandwidth of one direction of a link: lanes x the generation's rate after
/// its line encoding (GB/s per lane: 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 for Gen1 to Gen6).
std::optional<double> pcie_bytes_per_s(const pcie_link& link);

} // namespace gpubench
