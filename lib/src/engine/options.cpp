#include "gpubench/engine/options.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>

namespace gpubench {

void validate(const measure_options& m) {
  common_options opts;
  opts.measure = m;
  validate_options(opts);
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
