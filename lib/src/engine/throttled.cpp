#include "gpubench/engine/throttled.hpp"

#include "gpubench/core/stats.hpp"

#include <algorithm>
#include <utility>

namespace gpubench {

clock_judge::clock_judge(double fraction, double resolution_ns)
    : fraction_(fraction), resolution_ns_(resolution_ns > 0 ? resolution_ns : 1000) {}

void clock_judge::seen(const std::optional<sm_clock_sample>& clock) {
  last_seen_ = true;
  last_mhz_.reset();
  if (!clock || clock->ns < clock_min_timer_steps * resolution_ns_) return;
  const double mhz = clock->cycles / clock->ns * 1e3;
  last_mhz_ = mhz;
  if (lower_.empty() || mhz <= lower_.top()) {
    lower_.push(mhz);
  } else {
    upper_.push(mhz);
  }
  if (lower_.size() > upper_.size() + 1) {
    upper_.push(lower_.top());
    lower_.pop();
  } else if (upper_.size() > lower_.size()) {
    lower_.push(upper_.top());
    upper_.pop();
  }
}

double clock_judge::median() const {
  if (lower_.empty()) return 0;
  return lower_.size() > upper_.size() ? lower_.top() : (lower_.top() + upper_.top()) / 2;
}

bool clock_judge::discard() {
  if (!last_seen_) return false;
  last_seen_ = false;
  if (!last_mhz_) {
    ++unresolved_;
    return false;
  }
  ++judged_;
  if (fraction_ > 0 && *last_mhz_ < fraction_ * median()) {
    ++rejected_;
    return true;
  }
  kept_mhz_.push_back(*last_mhz_);
  return false;
}

nlohmann::json clock_judge::sm_clock() const {
  if (judged_ == 0 && unresolved_ == 0) return nlohmann::json::object();
  nlohmann::json j{{"source", "gpu"},
                   {"samples", kept_mhz_.size()},
                   {"unresolved", unresolved_},
                   {"resolution_ns", resolution_ns_}};
  if (!kept_mhz_.empty()) {
    const auto s = summarize(kept_mhz_);
    j["median_mhz"] = s.median;
    j["min_mhz"] = s.min;
  }
  return j;
}

nlohmann::json clock_judge::record(std::size_t kept) const {
  nlohmann::json j{{"fraction", fraction_}, {"applied", judged_ > 0},
                   {"clock", "gpu"},        {"with_reading", judged_},
                   {"kept", kept},          {"rejected", all_kept_ ? 0 : rejected_}};
  if (judged_ > 0) j["median_sm_clock_mhz"] = median();
  if (all_kept_) j["reason"] = "every sample was throttled: none dropped";
  if (judged_ == 0 && unresolved_ > 0)
    j["reason"] = "no sample was long enough to read its SM clock on the GPU (at least " +
                  std::to_string(static_cast<long>(clock_min_timer_steps * resolution_ns_)) +
                  " ns)";
  else if (judged_ == 0)
    j["reason"] = "no SM clock was read on the GPU";
  return j;
}

nlohmann::json nvml_throttle_opinion(const std::vector<sample_window>& windows,
                                     const std::vector<gpu_reading>& readings, double fraction) {
  using time_point = std::chrono::steady_clock::time_point;
  std::vector<double> clocks;
  std::vector<std::pair<time_point, unsigned>> stamped; // by time, for each window's lookup
  for (const auto& r : readings)
    if (r.sm_clock_mhz) {
      clocks.push_back(*r.sm_clock_mhz);
      stamped.emplace_back(r.at, *r.sm_clock_mhz);
    }
  if (clocks.empty()) return {{"reason", "no SM clock reading"}};
  std::sort(stamped.begin(), stamped.end());
  const double median = summarize(clocks).median;
  std::size_t with_reading = 0;
  std::size_t below = 0;
  for (const auto& w : windows) {
    auto it = std::lower_bound(stamped.begin(), stamped.end(), w.begin,
                               [](const auto& r, time_point t) { return r.first < t; });
    if (it == stamped.end() || it->first > w.end) continue;
    unsigned lowest = it->second;
    for (; it != stamped.end() && it->first <= w.end; ++it) lowest = std::min(lowest, it->second);
    ++with_reading;
    if (lowest < fraction * median) ++below;
  }
  return {
      {"median_sm_clock_mhz", median}, {"with_reading", with_reading}, {"below_fraction", below}};
}

} // namespace gpubench
