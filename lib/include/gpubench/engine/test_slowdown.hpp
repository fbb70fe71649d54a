#pragma once
// GPUBENCH_TEST_SLOWDOWN="<measurement>:<fraction>": a test-only knob that adds a calibrated GPU
// delay to every GPU measurement of that name, so the regression gate's detection rate can be
// measured (docs/ci.md). Off unless the variable is set; a run that has it says so in its meta.
#include <optional>
#include <string>
#include <string_view>

namespace gpubench {

struct test_slowdown {
  std::string measurement;
  double fraction = 0; ///< the delay as a fraction of the measurement's own median
};

/// Parses "<measurement>:<fraction>" (fraction in (0, 10], "0.1" or "10%"); usage_error otherwise.
test_slowdown parse_test_slowdown(std::string_view text);

/// The knob from the environment, parsed once; empty when GPUBENCH_TEST_SLOWDOWN is unset or empty.
const std::optional<test_slowdown>& test_slowdown_from_env();

/// The variable's text as recorded in a result's meta ("" when unset).
std::string test_slowdown_text();

} // namespace gpubench
