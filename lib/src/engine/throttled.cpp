#include "gpubench/engine/throttled.hpp"

#include "gpubench/core/stats.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

namespace gpubench {

nlohmann::json throttled_not_checked(double fraction, const std::string& reason) {
  return nlohmann::json{
      {"fraction", fraction}, {"applied", false}, {"reason", reason}, {"rejected", 0}};
}

nlohmann::json reject_throttled_samples(std::vector<double>& samples,
                                        const std::vector<sample_window>& windows,
                                        const std::vector<gpu_reading>& readings, double fraction) {
  using time_point = std::chrono::steady_clock::time_point;
  std::vector<double> clocks;
  std::vector<std::pair<time_point, unsigned>> stamped; // by time, for each window's lookup
  for (const auto& r : readings)
    if (r.sm_clock_mhz) {
      clocks.push_back(*r.sm_clock_mhz);
      stamped.emplace_back(r.at, *r.sm_clock_mhz);
    }
  std::sort(stamped.begin(), stamped.end());
  if (clocks.empty()) return throttled_not_checked(fraction, "no SM clock reading");
  const double median = summarize(clocks).median;
  const double floor_mhz = fraction * median;

  std::vector<bool> drop(samples.size(), false);
  std::size_t with_reading = 0;
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < samples.size() && i < windows.size(); ++i) {
    std::optional<unsigned> lowest;
    auto it = std::lower_bound(stamped.begin(), stamped.end(), windows[i].begin,
                               [](const auto& r, time_point t) { return r.first < t; });
    for (; it != stamped.end() && it->first <= windows[i].end; ++it)
      lowest = std::min(lowest.value_or(it->second), it->second);
    if (!lowest) continue;
    ++with_reading;
    drop[i] = *lowest < floor_mhz;
    if (drop[i]) ++dropped;
  }
  nlohmann::json out{{"fraction", fraction},
                     {"applied", true},
                     {"median_sm_clock_mhz", median},
                     {"with_reading", with_reading}};
  if (dropped == samples.size() && dropped > 0) {
    out["reason"] = "every sample was throttled: none dropped";
    dropped = 0;
  } else {
    std::size_t k = 0;
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (!drop[i]) samples[k++] = samples[i];
    samples.resize(k);
  }
  out["kept"] = samples.size();
  out["rejected"] = dropped;
  return out;
}

} // namespace gpubench
