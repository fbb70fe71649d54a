#pragma once
#include "gpubench/engine/benchmark.hpp"

namespace gpubench {

/// `gpubench gemm`: C = op(A) op(B) on cuBLASLt against OpenBLAS on the host's cores, every element
/// verified against an f64 reference from the same rounded inputs, FLOP/s against the dtype's
/// theoretical peak (docs/gemm.md).
benchmark make_gemm_benchmark();

} // namespace gpubench
