#include "gpubench/runner.hpp"

#include "gpubench/cuda/error.hpp"
#include "gpubench/env.hpp"
#include "gpubench/errors.hpp"

#include <fmt/format.h>

#include <chrono>

namespace gpubench {

std::vector<planned_point> plan_points(const benchmark& b, const param_values& values,
                                       const common_options& opts) {
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
                   const std::vector<std::string>& argv) {
  using clock = std::chrono::steady_clock;
  run_report rep;
  rep.meta = collect_meta(argv);
  const auto started = clock::now();
  const auto stop_incomplete = [&](std::string why) {
    rep.meta.incomplete = true;
    rep.meta.incomplete_reason = std::move(why);
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (interrupt_requested()) {
      stop_incomplete(fmt::format("interrupted (SIGINT) after {} of {} points", i, points.size()));
      break;
    }
    const double elapsed = std::chrono::duration<double>(clock::now() - started).count();
    const std::string eta =
        i == 0 ? ""
               : fmt::format(", ETA {:.0f} s", elapsed / static_cast<double>(i) *
                                                   static_cast<double>(points.size() - i));
    ctx.progress(i + 1, points.size(),
                 fmt::format("{} (elapsed {:.0f} s{})", point_label(p), elapsed, eta));
    result r;
    bool stop = false;
    try {
      r = p.bench->run_point(p.params, ctx);
    } catch (const cuda::out_of_memory_error& e) {
      r = failed_point(p, result_status::skipped, fmt::format("out of memory: {}", e.what()));
    } catch (const cuda::cuda_error& e) {
      r = failed_point(p, result_status::error, e.what());
      if (e.sticky()) {
        stop = true;
        stop_incomplete(fmt::format("CUDA error in {}: {}", point_label(p), e.what()));
      }
    }
    r.benchmark = p.bench->name;
    r.device = point_device(p.params);
    r.params.erase("device");
    rep.results.push_back(std::move(r));
    if (stop) break;
    if (interrupt_requested()) {
      stop_incomplete(
          fmt::format("interrupted (SIGINT) after {} of {} points", i + 1, points.size()));
      break;
    }
  }
  ctx.end_progress();
  // After a sticky error the context is unusable; the devices seen so far are still recorded.
  rep.devices = ctx.devices_used();
  return rep;
}

} // namespace gpubench
