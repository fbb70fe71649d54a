#include "gpubench/cuda/flop_rates.hpp"

#include <array>

namespace gpubench::cuda {

std::optional<double> cuda_core_flops_per_clock_per_sm(dtype t, int cc_major, int cc_minor) {
  // {f64, f32, f16 (half2), bf16 (bfloat162)}: FLOPs per clock per SM on the CUDA cores, from
  // NVIDIA's architecture whitepapers (A100, GA102, AD102, H100).
  static constexpr std::array<arch_rates<4>, 4> table{{
      {8, 0, {64, 128, 512, 256}},  // A100 (GA100)
      {8, 6, {4, 256, 256, 256}},   // GA10x (A10, A40, RTX 30)
      {8, 9, {4, 256, 256, 256}},   // AD10x (L4, L40, RTX 40)
      {9, 0, {128, 256, 512, 512}}, // GH100 (H100, H200)
  }};
  const arch_rates<4>* r = rates_of(table, cc_major, cc_minor);
  if (r == nullptr) return std::nullopt;
  switch (t) {
  case dtype::f64: return r->flops[0];
  case dtype::f32: return r->flops[1];
  case dtype::f16: return r->flops[2];
  case dtype::bf16: return r->flops[3];
  }
  return std::nullopt;
}

double flops_per_clock_per_sm(dtype t, const device_info& info, bool fused) {
  const double fma = cuda_core_flops_per_clock_per_sm(t, info.cc_major, info.cc_minor).value_or(0);
  return fused ? fma : fma / 2;
}

} // namespace gpubench::cuda
