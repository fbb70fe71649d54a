#include "gpubench/engine/test_hooks.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/stats.hpp"
#include "gpubench/cuda/fault_injection.hpp"
#include "gpubench/cuda/test_delay.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/engine/runner.hpp"
#include "gpubench/input/sizes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace gpubench {

namespace {
constexpr const char* slowdown_variable = "GPUBENCH_TEST_SLOWDOWN";
constexpr const char* inject_fault_variable = "GPUBENCH_INJECT_FAULT";

/// The two variables as the process started with them (environment.hpp).
struct hook_texts {
  std::string slowdown = process_environment().test_slowdown;
  std::string fault = process_environment().inject_fault;
};
const hook_texts& texts() {
  static const hook_texts t;
  return t;
}
} // namespace

test_slowdown parse_test_slowdown(std::string_view text) {
  const auto colon = text.rfind(':');
  const auto fail = [&] {
    return usage_error(fmt::format("{}: '{}' is not <measurement>:<fraction> (e.g. end_to_end:0.10 "
                                   "or end_to_end:10%)",
                                   slowdown_variable, text));
  };
  if (colon == std::string_view::npos || colon == 0) throw fail();
  test_slowdown t;
  t.measurement = std::string(text.substr(0, colon));
  const std::string_view number = text.substr(colon + 1);
  // A fraction ("0.1"), or a percentage ("10%") read as every percentage is.
  const std::optional<double> pct = read_percent(number, true);
  if (pct) {
    t.fraction = *pct / 100;
  } else {
    try {
      t.fraction = parse_number(number, slowdown_variable);
    } catch (const usage_error&) {
      throw fail();
    }
  }
  if (!(t.fraction > 0 && t.fraction <= 10)) throw fail();
  return t;
}

injected_fault parse_injected_fault(std::string_view text) {
  const auto colon = text.find(':');
  injected_fault f;
  std::string_view number = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  std::string_view kind;
  if (const auto second = number.find(':'); second != std::string_view::npos) {
    kind = number.substr(second + 1);
    number = number.substr(0, second);
  }
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), f.point);
  const bool kind_ok =
      kind.empty() || kind == "illegal_address" || kind == "bad_alloc" || kind == "thread_start";
  if (colon == std::string_view::npos || colon == 0 || number.empty() || ec != std::errc() ||
      ptr != number.data() + number.size() || f.point == 0 || !kind_ok)
    throw usage_error(fmt::format("{}: '{}' is not BENCHMARK:POINT[:KIND] (a benchmark, the "
                                  "1-based index of a point in the run's plan and optionally "
                                  "illegal_address, bad_alloc or thread_start, e.g. vecadd:2)",
                                  inject_fault_variable, text.substr(0, 80)));
  if (kind == "bad_alloc") f.kind = fault_kind::bad_alloc;
  if (kind == "thread_start") f.kind = fault_kind::thread_start;
  f.benchmark = std::string(text.substr(0, colon)); // checked against the plan
  return f;
}

std::optional<injected_rank_failure> parse_rank_failure(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string value(text);
  injected_rank_failure f;
  char mode[16] = {};
  unsigned long point = 0;
  const int n = std::sscanf(value.c_str(), "%d:%lu:%15s", &f.rank, &point, mode);
  const std::string m(mode);
  if (n < 2 || f.rank < 0 || point == 0 || (n == 3 && m != "abort" && m != "stall"))
    throw usage_error(
        fmt::format("GPUBENCH_MPI_TEST_FAIL: '{}' is not RANK:POINT[:abort|stall]", value));
  f.point = point;
  f.stall = m == "stall";
  return f;
}

const test_hooks& test_hooks_from_env() {
  // A malformed variable throws from the initializer, which then runs again at the next call:
  // a usage error at every call.
  static const test_hooks hooks = [] {
    test_hooks h;
    h.slowdown_text = texts().slowdown;
    if (!texts().slowdown.empty()) h.slowdown = parse_test_slowdown(texts().slowdown);
    if (!texts().fault.empty()) h.fault = parse_injected_fault(texts().fault);
    return h;
  }();
  return hooks;
}

std::string test_slowdown_text() { return texts().slowdown; }

std::function<void(cudaStream_t)>
test_slowdown_body(std::string_view measurement, const std::function<void(cudaStream_t)>& body,
                   const std::function<std::vector<double>()>& probe) {
  const auto& knob = test_hooks_from_env().slowdown;
  if (!knob || knob->measurement != measurement) return body;
  const auto calib = probe();
  if (calib.empty()) return body;
  const auto delay_ns = static_cast<std::uint64_t>(knob->fraction * summarize(calib).median * 1e9);
  return [body, delay_ns](cudaStream_t s) {
    body(s);
    if (delay_ns > 0) cuda::launch_delay_ns(delay_ns, s);
  };
}

void check_fault_injection(const std::vector<planned_point>& points) {
  const auto& hook = test_hooks_from_env().fault;
  if (!hook) return;
  const injected_fault& f = *hook;
  std::vector<std::string_view> planned;
  for (const auto& p : points)
    if (std::find(planned.begin(), planned.end(), p.bench->name) == planned.end())
      planned.emplace_back(p.bench->name);
  if (std::find(planned.begin(), planned.end(), f.benchmark) == planned.end())
    throw usage_error(fmt::format("{}: '{}' is not a benchmark of this run; expected one of {}",
                                  inject_fault_variable, f.benchmark, fmt::join(planned, ", ")));
  if (f.point > points.size())
    throw usage_error(fmt::format("{}: point {} is beyond the plan, which has {} point{}",
                                  inject_fault_variable, f.point, points.size(),
                                  points.size() == 1 ? "" : "s"));
  const planned_point& p = points[f.point - 1];
  if (p.bench->name != f.benchmark)
    throw usage_error(fmt::format("{}: point {} of the plan is a {} point, not {}",
                                  inject_fault_variable, f.point, p.bench->name, f.benchmark));
  if (f.kind == fault_kind::illegal_address && point_device(p.params) < 0)
    throw usage_error(fmt::format("{}: point {} runs on the CPU only (--cpu-only); a device fault "
                                  "needs a GPU",
                                  inject_fault_variable, f.point));
}

void inject_fault_at(std::size_t index, const planned_point& p, run_context& ctx) {
  const auto& hook = test_hooks_from_env().fault;
  if (!hook || hook->point != index) return;
  switch (hook->kind) {
  case fault_kind::illegal_address:
    ctx.log("{}: launching the kernel fault_injection before point {} (test-only)",
            inject_fault_variable, index);
    cuda::inject_illegal_address(point_device(p.params));
    return;
  case fault_kind::bad_alloc:
    ctx.log("{}: std::bad_alloc in point {} (test-only)", inject_fault_variable, index);
    throw std::bad_alloc();
  case fault_kind::thread_start:
    ctx.log("{}: the CPU thread pool restarts in point {} and its second thread fails to start "
            "(test-only)",
            inject_fault_variable, index);
    ctx.drop_cpu_pool();
    thread_pool::fail_thread_start_for_testing(2);
    return;
  }
}

void corrupt_for_test(const nlohmann::json& point, std::string_view what, std::span<float> values) {
  const auto it = point.find(test_corrupt_key);
  if (it == point.end() || !it->is_string() || it->get<std::string>() != what || values.empty())
    return;
  std::uint32_t bits = 0;
  float& middle = values[values.size() / 2];
  std::memcpy(&bits, &middle, sizeof bits);
  bits ^= 1U;
  std::memcpy(&middle, &bits, sizeof bits);
}

} // namespace gpubench
