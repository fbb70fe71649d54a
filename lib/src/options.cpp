#include "gpubench/options.hpp"

#include "gpubench/errors.hpp"

#include <fmt/format.h>

#include <cmath>

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
  need(std::isfinite(m.timeout) && m.timeout > 0 && m.timeout <= 86400, "timeout",
       fmt::format("{} must be a number of seconds in (0, 86400]", m.timeout));
}

} // namespace gpubench
