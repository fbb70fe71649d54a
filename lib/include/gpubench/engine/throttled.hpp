#pragma once
// --reject-throttled: a GPU sample during which the SM clock fell below a stated fraction of the
// measurement's median SM clock is dropped and counted (methodology.md, "Throttled samples").
// The clock readings come from the measurement's telemetry (telemetry.hpp, each reading stamped
// with its steady_clock time); the sampler frame (sampler_frame.hpp) takes each sample's host
// window and calls this once the telemetry scope is closed, for every sampler alike.
#include "gpubench/telemetry/telemetry.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace gpubench {

/// One sample's host window: steady_clock right before the sample was taken and right after its
/// time was known (the host waited for the GPU inside it).
struct sample_window {
  std::chrono::steady_clock::time_point begin;
  std::chrono::steady_clock::time_point end;
};

/// Drops from `samples` (the kept samples in order; `windows[i]` is samples[i]'s) each sample
/// whose lowest SM clock reading stamped inside its window is below `fraction` times the median
/// SM clock of all `readings`. A sample with no reading in its window is kept. When every sample
/// would be dropped, none is (the record says so). Returns the record the measurement keeps
/// ("throttled_samples"): fraction, applied, median_sm_clock_mhz, with_reading, kept, rejected.
nlohmann::json reject_throttled_samples(std::vector<double>& samples,
                                        const std::vector<sample_window>& windows,
                                        const std::vector<gpu_reading>& readings, double fraction);

/// The record of a measurement whose samples could not be checked (no telemetry, no clock
/// readings): nothing dropped, and why.
nlohmann::json throttled_not_checked(double fraction, const std::string& reason);

} // namespace gpubench
