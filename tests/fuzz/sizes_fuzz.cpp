// libFuzzer target: the size, list and range parser of every size option (lib/src/sizes.cpp).
// Any input either parses or throws usage_error; what parses obeys the documented limits, and
// format_size writes text that parses back to the same value.
#include "gpubench/errors.hpp"
#include "gpubench/sizes.hpp"

#include <cstddef>
#include <cstdint>
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
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_round_trip(gpubench::parse_size(text, "n"));
  } catch (const gpubench::usage_error&) {
  }
  try {
    const auto values = gpubench::parse_size_list(text, "n");
    require(!values.empty() && values.size() <= gpubench::max_list_values);
    for (const auto v : values) check_round_trip(v);
  } catch (const gpubench::usage_error&) {
  }
  try {
    const auto numbers = gpubench::parse_number_list(text, "sigma");
    require(!numbers.empty() && numbers.size() <= gpubench::max_list_values);
  } catch (const gpubench::usage_error&) {
  }
  return 0;
}
