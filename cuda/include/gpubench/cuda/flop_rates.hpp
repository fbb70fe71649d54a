#pragma once
// The CUDA cores' theoretical FLOP rates per architecture: with the SM count and the SM clock,
// the compute roof of a row whose FLOPs run on them (docs/roofline.md has the table and its
// sources). The tensor cores' rates are gemm's (gemm_cpu.hpp).
#include "gpubench/cuda/device_info.hpp"
#include "gpubench/dtype.hpp"

#include <array>
#include <cstddef>
#include <optional>

namespace gpubench::cuda {

/// One row of a per-architecture table of FLOPs per clock per SM: compute capability major.minor
/// and `Columns` rates, one per precision (the table says which).
template <std::size_t Columns = 4>
struct arch_rates {
  int major;
  int minor;
  std::array<double, Columns> flops;
};

/// The row of `table` for compute capability major.minor, or null.
template <std::size_t Columns, std::size_t N>
constexpr const arch_rates<Columns>* rates_of(const std::array<arch_rates<Columns>, N>& table,
                                              int cc_major, int cc_minor) noexcept {
  for (const auto& r : table)
    if (r.major == cc_major && r.minor == cc_minor) return &r;
  return nullptr;
}

/// FLOPs per clock per SM of fused multiply-adds on the CUDA cores (an FMA is 2 FLOPs; f16 and
/// bf16 as packed pairs), for compute capabilities 8.0, 8.6, 8.9 and 9.0; nullopt for another.
std::optional<double> cuda_core_flops_per_clock_per_sm(dtype t, int cc_major, int cc_minor);

/// The rate a row declares (work_counts::flops_per_clock_per_sm) for `info`'s GPU: FMAs in `t`,
/// or (`fused` false) separate adds and multiplies, one FLOP a lane an instruction, half the FMA
/// rate; 0 where the table does not know the architecture.
double flops_per_clock_per_sm(dtype t, const device_info& info, bool fused);

} // namespace gpubench::cuda
