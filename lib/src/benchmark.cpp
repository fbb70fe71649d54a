#include "gpubench/benchmark.hpp"

#include "gpubench/errors.hpp"
#include "gpubench/untrusted_file.hpp"

#include <fmt/format.h>

namespace gpubench {

const benchmark* find_benchmark(std::string_view name) noexcept {
  for (const auto& b : all_benchmarks())
    if (b.name == name) return &b;
  return nullptr;
}

param_values with_defaults(const benchmark& b, const param_values& given) {
  param_values out;
  for (const auto& p : b.params) out[p.name] = p.default_value;
  for (const auto& [k, v] : given) {
    if (out.find(k) == out.end()) {
      std::string known;
      for (const auto& p : b.params) known += (known.empty() ? "" : ", ") + p.name;
      throw usage_error(
          fmt::format("{}: unknown parameter '{}' (known: {})", b.name, clip(k), known));
    }
    out[k] = v;
  }
  return out;
}

const std::string& value_of(const param_values& v, std::string_view name) {
  const auto it = v.find(name);
  if (it == v.end()) throw std::logic_error(fmt::format("parameter {} has no value", name));
  return it->second;
}

} // namespace gpubench

namespace gpubench {
int point_device(const nlohmann::json& point) { return point.value("device", -1); }
} // namespace gpubench
