#include "gpubench/engine/test_slowdown.hpp"

#include "gpubench/core/errors.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace gpubench {

test_slowdown parse_test_slowdown(std::string_view text) {
  const auto colon = text.rfind(':');
  const auto fail = [&] {
    return usage_error(fmt::format("GPUBENCH_TEST_SLOWDOWN: '{}' is not <measurement>:<fraction> "
                                   "(e.g. end_to_end:0.10 or end_to_end:10%)",
                                   text));
  };
  if (colon == std::string_view::npos || colon == 0) throw fail();
  test_slowdown t;
  t.measurement = std::string(text.substr(0, colon));
  std::string number(text.substr(colon + 1));
  double scale = 1;
  if (!number.empty() && number.back() == '%') {
    number.pop_back();
    scale = 0.01;
  }
  std::istringstream in(number);
  double x = 0;
  in >> x;
  if (number.empty() || !in || !in.eof() || !std::isfinite(x)) throw fail();
  t.fraction = x * scale;
  if (!(t.fraction > 0 && t.fraction <= 10)) throw fail();
  return t;
}

std::string test_slowdown_text() {
  const char* v = std::getenv("GPUBENCH_TEST_SLOWDOWN");
  return v == nullptr ? std::string() : std::string(v);
}

const std::optional<test_slowdown>& test_slowdown_from_env() {
  static const std::optional<test_slowdown> knob = []() -> std::optional<test_slowdown> {
    const auto text = test_slowdown_text();
    if (text.empty()) return std::nullopt;
    return parse_test_slowdown(text);
  }();
  return knob;
}

} // namespace gpubench
