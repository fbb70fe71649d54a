#include "gpubench/engine/options.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>

namespace gpubench {

void validate(const measure_options& m) {
  const auto need = [](bool ok, const char* option, const std::string& why) {
    if (!ok) throw usage_error(fmt::format("--{}: {}", option, why));
  };
  need(m.warmup >= 0 && m.warmup <= 1000000, "warmup",
       fmt::format("{} is out of range (0 to 1000000)", m.warmup));
  need(m.min_samples >= 1 && m.min_samples <= 10000000, "min-samples",
       fmt::format("{} is out of range (1 to 10000000)", m.min_samples));
  need(m.max_samples >= m.min_samples && m.max_samples <= 10000000, "max-samples",
       fmt::format("{} must be at least --min-samples ({}) and at most 10000000", m.max_samples,
                   m.min_samples));
  need(std::isfinite(m.min_time) && m.min_time >= 0 && m.min_time <= 86400, "min-time",
       fmt::format("{} must be a number of seconds in [0, 86400]", m.min_time));
  need(std::isfinite(m.max_noise) && m.max_noise > 0 && m.max_noise <= 1, "max-noise",
       fmt::format("{}% must be in (0, 100]", m.max_noise * 100));
  need(std::isfinite(m.batch_time) && m.batch_time >= 0 && m.batch_time <= 60, "batch-time",
       fmt::format("{} must be a number of seconds in [0, 60]", m.batch_time));
  need(std::isfinite(m.energy_window) && m.energy_window >= 1 && m.energy_window <= 60,
       "energy-window", fmt::format("{} must be a number of seconds in [1, 60]", m.energy_window));
  need(m.energy_windows >= 5 && m.energy_windows <= 100, "energy-windows",
       fmt::format("{} is out of range (5 to 100)", m.energy_windows));
  need(std::isfinite(m.timeout) && m.timeout > 0 && m.timeout <= 86400, "timeout",
       fmt::format("{} must be a number of seconds in (0, 86400]", m.timeout));
  need(!m.warm || !m.l2_flush || *m.l2_flush == l2_flush_mode::none, "warm",
       fmt::format("means --l2-flush none; it conflicts with --l2-flush {} (give one of them)",
                   m.l2_flush ? to_string(*m.l2_flush) : ""));
}

// CLI11 2.1 converts integers with strtoll/strtoull in base 0 ("0x10" is 16, "010" is 8, "-1" wraps
// for unsigned) and floating point with strtold ("0x1p4", "inf"): each numeric option's text is
// checked here by the rules run files follow and rewritten in plain decimal before CLI11 reads it.
std::string normalize_integer_text(std::string& text, bool allow_negative, std::string_view what) {
  std::string_view s = text;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const std::string expected(what);
  if (s.empty() || (s.front() == '-' && !allow_negative))
    return fmt::format("'{}' is not {}", clip(text), expected);
  std::string canonical;
  if (allow_negative) {
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range)
      return fmt::format("'{}' is out of range for a 64-bit integer", clip(text));
    if (ec != std::errc() || ptr != s.data() + s.size())
      return fmt::format("'{}' is not {} (hexadecimal, exponents and trailing text are refused)",
                         clip(text), expected);
    canonical = std::to_string(v);
  } else {
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size())
      return fmt::format("'{}' is not {}", clip(text), expected);
    canonical = std::to_string(v);
  }
  text = canonical;
  return {};
}

std::string normalize_number_text(std::string& text) {
  // inf and nan are left to validate(), which says what range the option takes.
  double any = 0;
  if (const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), any);
      ec == std::errc() && ptr == text.data() + text.size() && !std::isfinite(any))
    return {};
  try {
    const double v = parse_number(text, "number");
    text = fmt::format("{}", v); // shortest text that reads back as the same double
    return {};
  } catch (const usage_error& e) {
    // "--number: 'TEXT' why": CLI11 prefixes the option's own name.
    std::string what = e.what();
    const auto colon = what.find(": ");
    return colon == std::string::npos ? what : what.substr(colon + 2);
  }
}

} // namespace gpubench
