#pragma once
#include "gpubench/engine/benchmark.hpp"

namespace gpubench {

/// `gpubench roofline`: a kernel family of tunable arithmetic intensity (FMA chains on data
/// streamed from device memory), verified element by element; the measured memory and compute
/// roofs and the ridge point per element type, beside the theoretical ones.
benchmark make_roofline_benchmark();

} // namespace gpubench
