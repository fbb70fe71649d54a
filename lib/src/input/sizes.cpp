#include "gpubench/input/sizes.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace gpubench {
namespace {

constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();

[[noreturn]] void bad(std::string_view option, std::string_view text, std::string_view why) {
  throw usage_error(fmt::format("--{}: '{}' {}", clip(option, 40), clip(text), why));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::uint64_t parse_digits(std::string_view digits, std::string_view option,
                           std::string_view whole) {
  if (digits.empty()) bad(option, whole, "is not a size (expected e.g. 10000000, 10M, 1Mi, 2^28)");
  if (digits.front() == '-') bad(option, whole, "is negative");
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) bad(option, whole, "is too large");
  if (ec != std::errc() || ptr != digits.data() + digits.size())
    bad(option, whole, "is not a size (expected e.g. 10000000, 10M, 1Mi, 2^28)");
  return v;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view option,
                          std::string_view whole) {
  if (a != 0 && b > max_u64 / a) bad(option, whole, "is too large (overflows 64 bits)");
  return a * b;
}

/// "1,000,000": one to three digits, then groups of three after commas, one of which starts with a
/// zero (no one lists a size as 000 or 024; "32,256" stays a list).
bool looks_like_thousands(std::string_view s) {
  const auto first = s.find(',');
  if (first == std::string_view::npos || first == 0 || first > 3) return false;
  bool zero_led = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool comma_place = i >= first && (i - first) % 4 == 0;
    if (comma_place ? s[i] != ',' : (s[i] < '0' || s[i] > '9')) return false;
    if (comma_place && i + 1 < s.size() && s[i + 1] == '0') zero_led = true;
  }
  return (s.size() - first) % 4 == 0 && zero_led;
}

} // namespace

std::uint64_t parse_size(std::string_view text, std::string_view option) {
  const std::string_view s = trim(text);
  if (s.empty()) bad(option, text, "is empty (expected a size such as 10M)");
  if (const auto caret = s.find('^'); caret != std::string_view::npos) {
    const std::uint64_t base = parse_digits(s.substr(0, caret), option, s);
    const std::uint64_t exp = parse_digits(s.substr(caret + 1), option, s);
    std::uint64_t v = 1;
    for (std::uint64_t i = 0; i < exp; ++i) {
      v = checked_mul(v, base, option, s);
      if (v == 0 || v == 1) break; // 0^k and 1^k
    }
    return v;
  }
  struct suffix {
    std::string_view text;
    std::uint64_t factor;
  };
  static constexpr suffix suffixes[] = {
      {"Ki", 1ULL << 10U}, {"Mi", 1ULL << 20U},  {"Gi", 1ULL << 30U},
      {"Ti", 1ULL << 40U}, {"K", 1000ULL},       {"k", 1000ULL},
      {"M", 1000000ULL},   {"G", 1000000000ULL}, {"T", 1000000000000ULL}};
  for (const auto& suf : suffixes) {
    if (s.size() > suf.text.size() && s.ends_with(suf.text)) {
      const std::uint64_t v = parse_digits(s.substr(0, s.size() - suf.text.size()), option, s);
      return checked_mul(v, suf.factor, option, s);
    }
  }
  return parse_digits(s, option, s);
}

std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view option) {
  std::vector<std::uint64_t> out;
  const auto push = [&](std::uint64_t v) {
    if (out.size() >= max_list_values)
      bad(option, text, fmt::format("expands to more than {} values", max_list_values));
    out.push_back(v);
  };
  if (trim(text).empty()) bad(option, text, "is empty (expected a size, a list or a range)");
  if (looks_like_thousands(trim(text)))
    bad(option, text,
        "has commas between groups of digits: a comma separates list values, so this is read as "
        "a list; write the number without them (1000000, or 1M)");
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item = trim(
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (item.empty()) bad(option, text, "has an empty list element");
    if (const auto c1 = item.find(':'); c1 != std::string_view::npos) {
      const auto c2 = item.find(':', c1 + 1);
      if (c2 == std::string_view::npos || item.find(':', c2 + 1) != std::string_view::npos)
        bad(option, item, "is not a range (expected FIRST:LAST:STEP or FIRST:LAST:xFACTOR)");
      const std::uint64_t first = parse_size(item.substr(0, c1), option);
      const std::uint64_t last = parse_size(item.substr(c1 + 1, c2 - c1 - 1), option);
      std::string_view step = trim(item.substr(c2 + 1));
      if (last < first) bad(option, item, "is a reversed range (first is larger than last)");
      if (!step.empty() && (step.front() == 'x' || step.front() == '*')) {
        const std::uint64_t factor = parse_size(step.substr(1), option);
        if (factor < 2) bad(option, item, "has a geometric factor below 2");
        if (first == 0) bad(option, item, "is a geometric range starting at 0");
        for (std::uint64_t v = first; v <= last;) {
          push(v);
          if (v > last / factor) break;
          v *= factor;
        }
      } else {
        const std::uint64_t inc = parse_size(step, option);
        if (inc == 0) bad(option, item, "has a zero step");
        for (std::uint64_t v = first; v <= last;) {
          push(v);
          if (last - v < inc) break;
          v += inc;
        }
      }
    } else {
      push(parse_size(item, option));
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

double parse_number(std::string_view text, std::string_view option) {
  std::string_view s = trim(text);
  const auto* expected = "is not a number (expected decimal digits such as 10, 0.5, -2 or 1e-3)";
  if (s.empty()) bad(option, text, "is empty (expected a number)");
  // One leading '+' is allowed, as people write it; from_chars itself takes only '-'.
  if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    // from_chars does not say which way: strtod does (inf on overflow, 0 or tiny on underflow).
    const double rough = std::strtod(std::string(s).c_str(), nullptr);
    bad(option, text,
        std::isinf(rough) ? "is out of range (a double holds at most about 1.8e308)"
                          : "is too small: it would read as 0 (a double holds down to about "
                            "4.9e-324)");
  }
  // Anything left over ("0x10" reads as 0 then "x10") is refused, not ignored.
  if (ec != std::errc() || ptr != s.data() + s.size()) bad(option, text, expected);
  // from_chars reads "inf", "nan" and "infinity" too.
  if (!std::isfinite(v)) bad(option, text, "is not a finite number");
  return v;
}

std::optional<double> read_percent(std::string_view text, bool sign_required) {
  std::string_view number = trim(text);
  const bool sign = !number.empty() && number.back() == '%';
  if (sign) number.remove_suffix(1);
  if ((sign_required && !sign) || number.empty()) return std::nullopt;
  try {
    return parse_number(number, "percentage");
  } catch (const usage_error&) {
    return std::nullopt;
  }
}

std::optional<std::vector<int>> parse_device_list(std::string_view text, std::string_view option) {
  if (trim(text) == "all") return std::nullopt;
  std::vector<int> out;
  std::size_t pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    const std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    int d = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (ec != std::errc() || ptr != item.data() + item.size() || d < 0 || d > 1023)
      throw usage_error(
          fmt::format("{}: '{}' is not a device index (0 to 1023) or 'all'", option, clip(item)));
    out.push_back(d);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

float to_float32(double value, std::string_view option) {
  const auto shown = fmt::format("{}", value);
  if (std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))
    bad(option, shown,
        "is out of range for float32 (at most about 3.4e38), the type it is used as");
  const auto f = static_cast<float>(value);
  if (value != 0 && f == 0)
    bad(option, shown,
        "is too small for float32, the type it is used as: it would be 0 (the smallest is "
        "about 1.4e-45)");
  return f;
}

std::vector<double> parse_number_list(std::string_view text, std::string_view option) {
  std::vector<double> out;
  if (trim(text).empty()) bad(option, text, "is empty (expected a number or a list)");
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item = trim(
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (item.empty()) bad(option, text, "has an empty list element");
    const double v = parse_number(item, option);
    if (out.size() >= max_list_values)
      bad(option, text, fmt::format("has more than {} values", max_list_values));
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<std::string> parse_word_list(std::string_view text, std::string_view option,
                                         const std::vector<std::string>& allowed,
                                         const std::vector<std::string>& all) {
  std::vector<std::string> out;
  const auto add = [&](const std::string& w) {
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  };
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    std::string word(trim(
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos)));
    // Any case matches (--dtype F32 is f32), and the result records the choice as declared.
    std::string lower = word;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& a : allowed)
      if (a == lower) word = a;
    if (lower == "all" || lower == "both") word = lower;
    if (word == "all" || (word == "both" && allowed.size() == 2)) {
      for (const auto& w : all.empty() ? allowed : all) add(w);
    } else if (std::find(allowed.begin(), allowed.end(), word) != allowed.end()) {
      add(word);
    } else {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(option, word, fmt::format("is not one of {} (or all)", list));
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string format_size(std::uint64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) {
    int e = 0;
    while ((1ULL << static_cast<unsigned>(e)) != n) ++e;
    return fmt::format("2^{}", e);
  }
  if (n >= 1000000000 && n % 1000000000 == 0) return fmt::format("{}G", n / 1000000000);
  if (n >= 1000000 && n % 1000000 == 0) return fmt::format("{}M", n / 1000000);
  if (n >= 1000 && n % 1000 == 0) return fmt::format("{}K", n / 1000);
  return fmt::format("{}", n);
}

} // namespace gpubench
