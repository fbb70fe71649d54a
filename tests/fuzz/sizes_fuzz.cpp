// libFuzzer target: the size, list and range parser of every size option (lib/src/input/sizes.cpp).
// Any input either parses or throws usage_error; what parses obeys the documented limits, and
// format_size writes text that parses back to the same value. Inputs are structure-aware
// (expand.hpp), so lists of megabytes are reached too; messages stay short and on one line.
#include "expand.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/sizes.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void check_round_trip(std::uint64_t v) {
  require(gpubench::parse_size(gpubench::format_size(v), "n") == v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string expanded = gpubench::fuzz::expand(data, size);
  const std::string_view text = expanded;
  const auto short_message = [](const gpubench::usage_error& e) {
    require(std::string_view(e.what()).size() <= 1000);
  };
  try {
    check_round_trip(gpubench::parse_size(text, "n"));
  } catch (const gpubench::usage_error& e) {
    short_message(e);
  }
  try {
    const auto values = gpubench::parse_size_list(text, "n");
    require(!values.empty() && values.size() <= gpubench::max_list_values);
    for (const auto v : values) check_round_trip(v);
  } catch (const gpubench::usage_error& e) {
    short_message(e);
  }
  try {
    const auto numbers = gpubench::parse_number_list(text, "sigma");
    require(!numbers.empty() && numbers.size() <= gpubench::max_list_values);
  } catch (const gpubench::usage_error& e) {
    short_message(e);
  }
  try {
    // Whatever parse_number accepts is finite and reads back the same from its shortest text.
    const double v = gpubench::parse_number(text, "lr");
    require(std::isfinite(v));
    require(gpubench::parse_number(fmt::format("{}", v), "lr") == v);
  } catch (const gpubench::usage_error& e) {
    short_message(e);
  }
  return 0;
}
