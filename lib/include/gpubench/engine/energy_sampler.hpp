#pragma once
// The energy strategy of the sampler frame (--energy): the GPU's energy counter read over windows
// of back-to-back work (telemetry/energy.hpp has the statistics, the window sizes and RAPL for the
// CPU). One of the engine's samplers, beside events, batch and timestamps (sampler_frame.hpp).
#include "gpubench/engine/sampler_frame.hpp"
#include "gpubench/telemetry/energy.hpp"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace gpubench {

/// Runs `body` back to back on the frame's stream (chunks of launches in flight, so the GPU never
/// idles) and measures its energy per operation with `monitor`; `ops_per_launch` operations a
/// launch. The energy strategy over `frame` (sampler_frame.hpp: neither flushed nor held, no
/// telemetry of its own): the frame's pre-run loads the body's kernels, and the load that the
/// windows measure begins at the frame's start gate, `name` (after the idle baseline and the
/// calibration). The tick and idle baseline are measured once per monitor and reused for the run.
/// Never throws for a missing counter: the object then says unsupported and why.
nlohmann::json measure_gpu_energy(gpu_monitor* monitor, const std::string& unavailable_reason,
                                  sampler_frame& frame, std::string_view name,
                                  const std::function<void(cudaStream_t)>& body,
                                  double ops_per_launch, const std::string& op_unit,
                                  double bytes_per_op, const energy_options& o);

} // namespace gpubench
