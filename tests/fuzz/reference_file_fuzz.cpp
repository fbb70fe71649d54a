// libFuzzer target: gpubench check's reference files (--reference FILE), read as
// load_reference_file reads them (parse_untrusted_json, then reference_from_json in
// lib/src/check/check_reference.cpp). Any document either loads or throws usage_error with a
// bounded one-line message; what loads writes back as JSON that reads back the same.
#include "expand.hpp"

#include "gpubench/check/check.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gpubench::fuzz::expand(data, size);
  try {
    const auto j = gpubench::parse_untrusted_json(text, "fuzz.json");
    const auto ref = gpubench::reference_from_json(j, "fuzz.json");
    const auto again = gpubench::reference_from_json(gpubench::to_json(ref), "again");
    if (gpubench::to_json(again) != gpubench::to_json(ref)) __builtin_trap();
  } catch (const gpubench::usage_error& e) {
    const std::string_view what = e.what();
    if (what.size() > 1000 || what.find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
