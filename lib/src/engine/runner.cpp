#include "gpubench/engine/runner.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/env.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/engine/test_hooks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <string_view>
#include <system_error>

namespace gpubench {

void complete_point(const point_plumbing& plumbing, result& r, run_context& ctx, int device) {
  if (r.verify.performed && !r.verify.passed && r.status == result_status::ok) {
    r.status = result_status::failed;
    r.reason = plumbing.verify_failure.empty() ? "verification failed" : plumbing.verify_failure;
  }
  for (auto& m : r.measurements) {
    const bool wanted =
        std::find(plumbing.peak_fraction_of.begin(), plumbing.peak_fraction_of.end(), m.name) !=
        plumbing.peak_fraction_of.end();
    // Only a measurement with samples: the peaks were measured (and cached) before it.
    if (device < 0 || m.samples.empty()) continue;
    if (wanted) add_peak_fractions(m, ctx.device_with_peaks(device));
    if (m.clock == clock_kind::gpu) add_roof_fraction(m, ctx.device_with_peaks(device));
  }
  for (const auto& ratio : plumbing.ratios) {
    const auto* x = r.find(ratio.numerator);
    const auto* y = r.find(ratio.denominator);
    if (x != nullptr && y != nullptr && y->median() > 0)
      r.derived[ratio.key] = x->median() / y->median();
  }
}

std::vector<planned_point> plan_points(const benchmark& b, const param_values& values,
                                       const common_options& opts) {
  // A malformed test hook is a usage error before anything touches a device.
  (void)test_hooks_from_env();
  if (opts.cpu_only && !b.supports_cpu_only)
    throw usage_error(fmt::format("--cpu-only: {} has no CPU-only mode; it needs a GPU", b.name));
  const auto points = b.plan(with_defaults(b, values), opts);
  const std::vector<int> devices = opts.cpu_only ? std::vector<int>{-1} : opts.devices;
  if (points.size() * devices.size() > max_points)
    throw usage_error(fmt::format("{}: the sweep has {} points, more than the limit of {}; split "
                                  "it into several runs",
                                  b.name, points.size() * devices.size(), max_points));
  std::vector<planned_point> out;
  for (const int d : devices)
    for (const auto& p : points) {
      planned_point pp{&b, p};
      pp.params["device"] = d;
      out.push_back(std::move(pp));
    }
  return out;
}

namespace {

std::string point_label(const planned_point& p) {
  std::string s = p.bench->name;
  for (const auto& [k, v] : p.params.items())
    if (k != "device")
      s += fmt::format(" {}={}", k, v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

/// A measurement interrupted (SIGINT) before its first sample has no data: its statistics would
/// read as 0 s, and the point's derived figures (speedups, rates) are computed from them. Such
/// measurements are dropped, with the point's derived figures; a point left without any
/// measurement (or stopped by the signal before it measured anything), and otherwise ok, is
/// reported skipped with the reason.
void drop_unsampled(result& r) {
  std::string dropped;
  for (const auto& m : r.measurements)
    if (m.samples.empty()) dropped += (dropped.empty() ? "" : ", ") + m.name;
  if (!dropped.empty()) {
    std::erase_if(r.measurements, [](const measurement& m) { return m.samples.empty(); });
    r.derived = nlohmann::json::object();
  }
  // Nothing measured: dropped above, or the signal stopped the benchmark before it measured.
  if (!r.measurements.empty() || r.status != result_status::ok ||
      (dropped.empty() && !interrupt_requested()))
    return;
  r.status = result_status::skipped;
  r.derived = nlohmann::json::object();
  if (dropped.empty())
    r.reason =
        fmt::format("interrupted ({}) before the first measurement", interrupt_signal_name());
  else if (interrupt_requested())
    r.reason = fmt::format("interrupted ({}) before the first sample of {}",
                           interrupt_signal_name(), dropped);
  else
    r.reason = fmt::format("no sample was taken of {}", dropped);
}

result failed_point(const planned_point& p, result_status status, std::string reason) {
  result r;
  r.benchmark = p.bench->name;
  r.params = p.params;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

} // namespace

run_report execute(const std::vector<planned_point>& points, run_context& ctx,
                   const std::vector<std::string>& argv, point_observer* observer) {
  using clock = std::chrono::steady_clock;
  check_fault_injection(points); // the test-only GPUBENCH_INJECT_FAULT (test_hooks.hpp)
  defer_interrupts(); // from here on a signal stops the run and the results so far are written
  run_report rep;
  rep.meta = collect_meta(argv);
  rep.meta.options = options_record(ctx.options());
  const auto started = clock::now();
  const auto stop_incomplete = [&](std::string why) {
    rep.meta.incomplete = true;
    rep.meta.incomplete_reason = std::move(why);
  };
  std::size_t kept_points = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (interrupt_requested()) {
      stop_incomplete(fmt::format("interrupted ({}) after {} of {} points", interrupt_signal_name(),
                                  i, points.size()));
      break;
    }
    if (const result* kept = observer != nullptr ? observer->recorded(i) : nullptr) {
      rep.results.push_back(*kept);
      ++kept_points;
      continue;
    }
    const double elapsed = std::chrono::duration<double>(clock::now() - started).count();
    const std::size_t ran = i - kept_points; // the ETA counts the points measured here
    const std::string eta =
        ran == 0 ? ""
                 : fmt::format(", ETA {:.0f} s", elapsed / static_cast<double>(ran) *
                                                     static_cast<double>(points.size() - i));
    ctx.progress(i + 1, points.size(),
                 fmt::format("{} (elapsed {:.0f} s{})", point_label(p), elapsed, eta));
    if (observer != nullptr) observer->before_point(i);
    result r;
    bool stop = false;
    try {
      inject_fault_at(i + 1, p, ctx); // test-only; nothing unless GPUBENCH_INJECT_FAULT names it
      r = p.bench->run_point(point_view(p.bench->params, p.params), ctx);
      drop_unsampled(r);
    }
    // The error policy: whatever fails inside one point is recorded with that point, the results
    // so far are kept and the sweep goes on; only a poisoned CUDA context stops it. Input errors
    // (usage_error) and a missing device are not about one point and still end the run; any other
    // std::exception is an error of the point.
    catch (const cuda::out_of_memory_error& e) {
      r = failed_point(p, result_status::skipped, fmt::format("out of memory: {}", e.what()));
    } catch (const cuda::cuda_error& e) {
      r = failed_point(p, result_status::error, e.what());
      if (e.sticky()) {
        stop = true;
        stop_incomplete(fmt::format("CUDA error in {}: {}", point_label(p), e.what()));
      }
    } catch (const host_memory_error& e) {
      r = failed_point(p, result_status::skipped, fmt::format("out of host memory: {}", e.what()));
    } catch (const std::bad_alloc&) {
      r = failed_point(p, result_status::skipped,
                       "out of host memory: an allocation failed (std::bad_alloc)");
    } catch (const point_error& e) {
      r = failed_point(p, result_status::error, e.what());
    } catch (const std::system_error& e) {
      r = failed_point(p, result_status::error, fmt::format("system error: {}", e.what()));
    } catch (const std::logic_error& e) {
      // A launcher that refuses its arguments (std::invalid_argument from cuda/): a defect or a
      // combination the kernels do not offer, of this point only.
      r = failed_point(p, result_status::error, fmt::format("invalid argument: {}", e.what()));
    } catch (const usage_error&) {
      throw; // the input, not this point: ends the run (exit 2)
    } catch (const cuda::no_device_error&) {
      throw; // no usable GPU: ends the run (exit 77)
    } catch (const std::exception& e) {
      // Anything else thrown inside the point (a std::runtime_error, a JSON value of the wrong
      // type): an error of that point, not the end of the sweep.
      r = failed_point(p, result_status::error, fmt::format("unexpected error: {}", e.what()));
    }
    r.benchmark = p.bench->name;
    r.device = point_device(p.params);
    r.params.erase("device");
    ctx.log_verbose("point {}/{}: {}: {}{} after {:.1f} s", i + 1, points.size(), point_label(p),
                    to_string(r.status), r.reason.empty() ? "" : " (" + r.reason + ")",
                    std::chrono::duration<double>(clock::now() - started).count() - elapsed);
    if (observer != nullptr) observer->after_point(i, r);
    rep.results.push_back(std::move(r));
    if (stop) break;
    if (interrupt_requested()) {
      stop_incomplete(fmt::format("interrupted ({}) after {} of {} points", interrupt_signal_name(),
                                  i + 1, points.size()));
      break;
    }
  }
  ctx.end_progress();
  // After a sticky error the context is unusable; the devices seen so far are still recorded.
  rep.devices = ctx.devices_used();
  return rep;
}

} // namespace gpubench
