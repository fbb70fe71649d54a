#pragma once
// One measurement as results hold it: its samples, statistics, stopping reason, how its samples
// were timed, and what the GPU was doing meanwhile. The samplers (engine/measure.hpp) fill it;
// the writers, result files and compare read it.
#include "gpubench/core/stats.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// How L2 is emptied before each GPU sample (--l2-flush). read: a kernel reads a buffer twice the
/// L2's size, leaving clean lines (gpubench's default); write: a memset of an L2-sized buffer, as
/// nvbench does, leaving dirty lines whose write-back lands in the timed work; none: no flush
/// (--warm).
enum class l2_flush_mode { read, write, none };
std::string_view to_string(l2_flush_mode m) noexcept;
std::optional<l2_flush_mode> parse_l2_flush_mode(std::string_view s) noexcept;
/// The choices as the command line spells them: "read, write, none".
std::string_view l2_flush_choices() noexcept;

/// Why sampling stopped. noise: rel. stddev <= max_noise; stable: the 95% interval of the
/// (10%-trimmed) mean is within +-max_noise/4 although single samples spread more (cold
/// micro-kernels); entropy: the entropy of the samples stopped growing (--stopping entropy); the
/// others are limits, not convergence.
enum class stop_reason { noise, stable, entropy, max_samples, timeout, interrupted };
std::string_view to_string(stop_reason r) noexcept;
std::optional<stop_reason> parse_stop_reason(std::string_view s) noexcept;

/// How a GPU sample was timed. launch_free: a blocking kernel held the stream while the start
/// event and the work were enqueued; includes_launch: the events also time the host's enqueue;
/// batch: the mean of many back-to-back launches between two events; timestamps: from the first
/// activity's start to the last one's end in the GPU's own timestamps (CUPTI), launch-free.
enum class gpu_timing { launch_free, includes_launch, batch, timestamps };
std::string_view to_string(gpu_timing t) noexcept;

/// The work one sample does: bytes that must move and items processed.
struct work_counts {
  double bytes = 0;
  double items = 0;
  std::string item_unit = "elements";
  /// Floating-point operations of one sample (an FMA is 2), where the work declares them; 0: not
  /// declared. With bytes, the row's arithmetic intensity (docs/roofline.md).
  double flops = 0;
  /// FLOPs per clock per SM of the units those FLOPs run on (cuda/flop_rates.hpp, gemm's tensor
  /// table); with the SMs and the SM clock the GPU counted, the compute roof over the row
  /// (rates.roof_flops_per_s, fraction_of_roof). 0: not known, no roof. Not written to files.
  double flops_per_clock_per_sm = 0;
};

enum class clock_kind { gpu, host };
/// "gpu" or "host", as the JSON, CSV and compare's rows name a clock.
constexpr std::string_view to_string(clock_kind k) noexcept {
  return k == clock_kind::host ? "host" : "gpu";
}

struct measurement {
  std::string name;
  clock_kind clock = clock_kind::gpu;
  std::vector<double> samples; ///< seconds, in the order taken
  summary stats;
  work_counts work;
  bool converged = false;
  std::optional<stop_reason> stopped; ///< unknown in files written before it was recorded
  bool cold = true;                   ///< L2 flushed before every sample (GPU clock only)
  /// GPU clock: how L2 was flushed before every sample (none when not flushed); unknown in files
  /// written before it was recorded (`cold` then says read or none).
  std::optional<l2_flush_mode> l2_flush{};
  std::optional<gpu_timing> timing; ///< GPU clock only
  std::size_t invalid_samples = 0;  ///< discarded (a blocking kernel that timed out)
  /// The stopping rule and what it recorded ("stopping" in the JSON; stopping.hpp); empty in
  /// files written before it was recorded.
  nlohmann::json stopping = nlohmann::json::object();
  /// --reject-throttled: the samples discarded because the SM clock fell during them
  /// ("throttled_samples" in the JSON; engine/throttled.hpp); empty when not asked for.
  nlohmann::json throttled = nlohmann::json::object();
  /// GPU clock: the SM clock the GPU counted across the kept samples ("sm_clock" in the JSON:
  /// median_mhz, min_mhz, samples, unresolved, resolution_ns; engine/throttled.hpp); empty for
  /// host rows, energy rows and files written before it was recorded.
  nlohmann::json sm_clock = nlohmann::json::object();
  long batch_launches = 0; ///< launches per sample (gpu_timing::batch only)
  /// gpu_timing::batch: the launches were held behind the blocking kernel (the GPU ran them back
  /// to back whatever the host's launch rate); false when the blocker could not be used.
  bool batch_launch_free = false;
  /// What a CPU reference is (threads, vectorization, dtype path), so a speedup says what it
  /// compares; empty for GPU rows.
  std::string description;
  /// What the GPU was doing (telemetry.hpp; agreed field names), empty when not recorded.
  nlohmann::json telemetry = nlohmann::json::object();
  /// --energy: energy per operation (energy.hpp), empty when not measured.
  nlohmann::json energy = nlohmann::json::object();
  /// GPU clock, samples timed with their launches (not behind the blocking kernel): the host took
  /// at least half the GPU time to enqueue the timed work, or the median is well above the
  /// launch-free time, so the GPU waited on the host (launch gaps inside the timed region) and
  /// the figure moves with host speed between processes. The gate judges such measurements apart
  /// (docs/compare.md); the table marks them '^'.
  bool host_bound = false;
  double host_enqueue_s = 0; ///< GPU clock: median host time to enqueue one sample's work
  /// GPU clock: the launch-free time: the median itself when the samples ran behind the blocking
  /// kernel, else the median of 3 samples timed with the body enqueued while the GPU was held
  /// busy (0 when not taken: samples longer than launch_free_max_sample_s).
  double launch_free_s = 0;
  /// bytes_per_s and items_per_s from the median, plus what the driver adds (fractions of peak).
  nlohmann::json rates = nlohmann::json::object();

  [[nodiscard]] double median() const noexcept { return stats.median; }
};

/// Fills stats, converged flag and median-based rates from samples and work.
void finalize(measurement& m);

} // namespace gpubench
