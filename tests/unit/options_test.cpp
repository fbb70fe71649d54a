// The measurement options' checks (lib/src/engine/options.cpp): what validate() refuses and says.
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/options.hpp"

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;
using namespace gpubench;

TEST_CASE("validate: --warm beside --l2-flush read or write is a usage error naming both",
          "[options]") {
  measure_options m;
  m.warm = true;
  CHECK_NOTHROW(validate(m));
  m.l2_flush = l2_flush_mode::none; // the same thing said twice
  CHECK_NOTHROW(validate(m));
  m.l2_flush = l2_flush_mode::write;
  CHECK_THROWS_AS(validate(m), usage_error);
  CHECK_THROWS_WITH(validate(m), Contains("--warm") && Contains("--l2-flush none") &&
                                     Contains("conflicts with --l2-flush write"));
  m.l2_flush = l2_flush_mode::read; // read given explicitly is not --warm either
  CHECK_THROWS_WITH(validate(m), Contains("conflicts with --l2-flush read"));
  m.warm = false;
  CHECK_NOTHROW(validate(m));
}
