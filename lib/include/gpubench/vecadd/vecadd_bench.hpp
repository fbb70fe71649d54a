#pragma once
#include "gpubench/engine/benchmark.hpp"

namespace gpubench {

/// `gpubench vecadd`: c = a + b, kernel alone, each transfer, end to end (serial and overlapped)
/// and the CPU reference.
benchmark make_vecadd_benchmark();

} // namespace gpubench
