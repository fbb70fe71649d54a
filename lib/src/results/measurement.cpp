#include "gpubench/results/measurement.hpp"

namespace gpubench {

std::string_view to_string(stop_reason r) noexcept {
  switch (r) {
  case stop_reason::noise: return "noise";
  case stop_reason::stable: return "stable";
  case stop_reason::entropy: return "entropy";
  case stop_reason::max_samples: return "max_samples";
  case stop_reason::timeout: return "timeout";
  case stop_reason::interrupted: return "interrupted";
  }
  return "?";
}

std::optional<stop_reason> parse_stop_reason(std::string_view s) noexcept {
  for (auto r : {stop_reason::noise, stop_reason::stable, stop_reason::entropy,
                 stop_reason::max_samples, stop_reason::timeout, stop_reason::interrupted})
    if (to_string(r) == s) return r;
  return std::nullopt;
}

std::string_view to_string(gpu_timing t) noexcept {
  switch (t) {
  case gpu_timing::launch_free: return "launch_free";
  case gpu_timing::includes_launch: return "includes_launch";
  case gpu_timing::batch: return "batch";
  case gpu_timing::timestamps: return "timestamps";
  }
  return "?";
}

std::string_view to_string(l2_flush_mode m) noexcept {
  switch (m) {
  case l2_flush_mode::read: return "read";
  case l2_flush_mode::write: return "write";
  case l2_flush_mode::none: return "none";
  }
  return "?";
}

std::optional<l2_flush_mode> parse_l2_flush_mode(std::string_view text) noexcept {
  std::string s;
  for (const char c : text) s += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  for (auto m : {l2_flush_mode::read, l2_flush_mode::write, l2_flush_mode::none})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

std::string_view l2_flush_choices() noexcept { return "read, write, none"; }

void finalize(measurement& m) {
  m.stats = summarize(m.samples);
  m.rates = nlohmann::json::object();
  if (m.stats.median > 0) {
    if (m.work.bytes > 0) m.rates["bytes_per_s"] = m.work.bytes / m.stats.median;
    if (m.work.items > 0) m.rates["items_per_s"] = m.work.items / m.stats.median;
    if (m.work.flops > 0) m.rates["flops_per_s"] = m.work.flops / m.stats.median;
  }
  if (m.work.flops > 0 && m.work.bytes > 0)
    m.rates["arithmetic_intensity"] = m.work.flops / m.work.bytes;
}

} // namespace gpubench
