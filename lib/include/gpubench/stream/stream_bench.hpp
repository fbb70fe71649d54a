#pragma once
#include "gpubench/engine/benchmark.hpp"

namespace gpubench {

/// `gpubench stream`: BabelStream's copy, mul, add, triad and dot, each verified against the CPU
/// reference, bandwidth against the theoretical and measured copy peaks.
benchmark make_stream_benchmark();

} // namespace gpubench
