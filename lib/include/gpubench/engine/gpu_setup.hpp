#pragma once
// What every GPU point of a benchmark sets up before it measures: the device's record, a stream
// of its own, the L2 flusher that cold samples use, and the sampler that times on that stream
// with the device's telemetry. Members are built in that order and go in reverse.
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/measure.hpp"
#include "gpubench/results/result.hpp"
#include "gpubench/telemetry/telemetry.hpp"

namespace gpubench {

struct gpu_setup {
  gpu_setup(const device_record& record, telemetry_source& telemetry)
      : dev(record), flusher(record.info.l2_bytes), sampler(stream.get(), &flusher, &telemetry) {}

  const device_record& dev;
  const cuda::stream stream;
  cuda::l2_flusher flusher;
  gpu_sampler sampler;
};

} // namespace gpubench
