// The check suite's points (check_suite.hpp): each measured, judged against its reference, and
// measured again once when a figure fails.
#include "gpubench/check/check_suite.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/empty_kernel.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/gemm/gemm_cpu.hpp"
#include "gpubench/registry/registry.hpp"

#include "gpubench/check/gpu_turn.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

namespace gpubench {

using nlohmann::json;

namespace {

/// Bytes filled with a pseudo-random pattern from `seed`, so a copy that lands wrong is seen.
void fill_pattern(std::byte* p, std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const std::uint64_t v = gen();
    std::memcpy(p + i, &v, 8);
  }
  for (; i < bytes; ++i) p[i] = static_cast<std::byte>(gen());
}

verification compare_bytes(const std::byte* want, const std::byte* got, std::size_t bytes) {
  verification v;
  v.performed = true;
  v.method = "exact (every byte)";
  v.checked = bytes;
  for (std::size_t i = 0; i < bytes; ++i)
    if (want[i] != got[i]) {
      if (v.mismatches == 0) v.details["first_mismatch_byte"] = i;
      ++v.mismatches;
    }
  v.passed = v.mismatches == 0;
  return v;
}

/// cudaMemcpy device to device (read and write counted), every byte checked afterwards.
result measure_d2d(int device, run_context& ctx) {
  const auto& opts = ctx.options();
  const std::size_t bytes = std::size_t{512} << 20U;
  result r;
  const cuda::scoped_device guard(device);
  cuda::require_device_memory(2 * bytes, "check d2d");
  gpu_setup gpu(ctx.device(device), ctx.telemetry(device));
  cuda::pinned_buffer<std::byte> host(bytes);
  fill_pattern(host.data(), bytes, opts.seed);
  cuda::device_buffer<std::byte> src(bytes);
  cuda::device_buffer<std::byte> dst(bytes);
  const cudaStream_t s = gpu.stream.get();
  cuda::copy_to_device_async(src.data(), host.data(), bytes, s);
  const auto copy = [&](cudaStream_t st) {
    cuda::copy_on_device_async(dst.data(), src.data(), bytes, st);
  };
  measure_row(
      r, gpu.sampler, opts,
      plain_gpu_row("d2d",
                    {2.0 * static_cast<double>(bytes), 2.0 * static_cast<double>(bytes), "bytes"},
                    copy));
  cuda::pinned_buffer<std::byte> got(bytes);
  cuda::fill_bytes_async(dst.data(), 0xFF, bytes, s);
  copy(s);
  cuda::copy_to_host_async(got.data(), dst.data(), bytes, s);
  cuda::synchronize(s);
  r.verify.merge(compare_bytes(host.data(), got.data(), bytes), "d2d");
  return r;
}

/// Pinned host to device, device to host, and both at once on two streams; the round trip checked
/// byte by byte afterwards.
result measure_pcie(int device, run_context& ctx) {
  const auto& opts = ctx.options();
  const std::size_t bytes = std::size_t{256} << 20U;
  result r;
  const cuda::scoped_device guard(device);
  cuda::require_device_memory(2 * bytes, "check pcie");
  gpu_setup gpu(ctx.device(device), ctx.telemetry(device));
  cuda::pinned_buffer<std::byte> up(bytes);
  cuda::pinned_buffer<std::byte> down(bytes);
  fill_pattern(up.data(), bytes, opts.seed);
  cuda::device_buffer<std::byte> to(bytes);
  cuda::device_buffer<std::byte> from(bytes);
  const cudaStream_t s = gpu.stream.get();
  cuda::copy_to_device_async(from.data(), up.data(), bytes, s);
  const cuda::stream second;
  const cuda::event fork(false);
  const cuda::event join(false);
  const auto h2d = [&](cudaStream_t st) {
    cuda::copy_to_device_async(to.data(), up.data(), bytes, st);
  };
  const auto d2h = [&](cudaStream_t st) {
    cuda::copy_to_host_async(down.data(), from.data(), bytes, st);
  };
  const auto both = [&](cudaStream_t st) {
    // The sampler times `st`: the second stream forks from it and joins it again.
    fork.record(st);
    fork.wait_on(second.get());
    h2d(st);
    d2h(second.get());
    join.record(second.get());
    join.wait_on(st);
  };
  const double b = static_cast<double>(bytes);
  measure_row(r, gpu.sampler, opts, plain_gpu_row("h2d", {b, b, "bytes"}, h2d));
  measure_row(r, gpu.sampler, opts, plain_gpu_row("d2h", {b, b, "bytes"}, d2h));
  measure_row(r, gpu.sampler, opts, plain_gpu_row("both", {2 * b, 2 * b, "bytes"}, both));
  // The round trip: the pattern up, then back down into poisoned memory.
  std::memset(down.data(), 0xFF, bytes);
  cuda::fill_bytes_async(to.data(), 0xFF, bytes, s);
  h2d(s);
  cuda::copy_to_host_async(down.data(), to.data(), bytes, s);
  cuda::synchronize(s);
  r.verify.merge(compare_bytes(up.data(), down.data(), bytes), "h2d+d2h");
  const auto state = read_gpu_state(ctx.device(device).info.pci_bus_id);
  if (state.link_max.value) {
    r.derived["pcie_link_max_generation"] = state.link_max.value->generation;
    r.derived["pcie_link_max_width"] = state.link_max.value->width;
  }
  return r;
}

/// An empty kernel's launch and the wait for it, on the host's clock.
result measure_launch(int device, run_context& ctx) {
  const auto& opts = ctx.options();
  result r;
  const cuda::scoped_device guard(device);
  const cuda::stream s;
  const auto round_trip = [&] {
    cuda::launch_empty_kernel(s.get());
    cuda::synchronize(s.get());
  };
  round_trip(); // the module loaded before the first sample
  // The host's scheduling puts a long tail on a ~10 us round trip: the stable rule's trimmed
  // interval needs several thousand samples, a fraction of a second (the timeout still bounds it).
  measure_options m = opts.measure;
  m.min_samples = std::max(m.min_samples, 200);
  m.max_samples = std::max(m.max_samples, 20000);
  r.measurements.push_back(measure_host("launch", m, {0, 1, "launches"}, round_trip));
  r.measurements.back().description = "an empty kernel launched and waited for (host clock)";
  return r;
}

/// The state under a PCIe transfer (an idle link may train down to save power).
result measure_state(int device, run_context& ctx) {
  result r;
  const cuda::scoped_device guard(device);
  const std::size_t bytes = std::size_t{64} << 20U;
  cuda::pinned_buffer<std::byte> host(bytes);
  cuda::device_buffer<std::byte> dev(bytes);
  const cuda::stream s;
  for (int i = 0; i < 16; ++i) cuda::copy_to_device_async(dev.data(), host.data(), bytes, s.get());
  const gpu_state state = read_gpu_state(ctx.device(device).info.pci_bus_id);
  s.synchronize();
  r.derived["state"] = to_json(state);
  json outcomes = json::array();
  for (const auto& o : judge_state(state)) outcomes.push_back(to_json(o));
  r.derived["check"] = outcomes;
  return r;
}

std::string mhz_text(double mhz) { return fmt::format("{:.0f} MHz", mhz); }

/// The theoretical figure of `spec` on the GPU of `r` (`max_mhz`: its highest SM clock).
theoretical_figure theoretical_for(const check_spec& spec, const cuda::device_info& info,
                                   std::optional<double> max_mhz, const result& r) {
  const auto compute = [&](std::optional<double> per_clock,
                           const char* what) -> theoretical_figure {
    if (!per_clock)
      return {std::nullopt, fmt::format("no {} table for compute capability {}.{}", what,
                                        info.cc_major, info.cc_minor)};
    if (!max_mhz) return {std::nullopt, "the GPU's highest SM clock is not known"};
    return {
        *per_clock * info.sms * *max_mhz * 1e6,
        fmt::format("{} FLOP/clock/SM x {} SMs x {}", *per_clock, info.sms, mhz_text(*max_mhz))};
  };
  if (spec.point == "hbm" || spec.point == "d2d")
    return {
        info.peak_bytes_per_s(),
        fmt::format("2 x {} x {} bits", mhz_text(info.mem_clock_khz / 1e3), info.bus_width_bits)};
  if (spec.point == "pcie") {
    // A lane count or generation as NVML gives it (a saved file may hold anything: check --from).
    const auto small = [&r](const char* key) -> std::optional<unsigned> {
      const auto it = r.derived.find(key);
      if (it == r.derived.end() || !it->is_number_integer()) return std::nullopt;
      const auto v = it->get<std::int64_t>();
      if (v < 0 || v > 64) return std::nullopt;
      return static_cast<unsigned>(v);
    };
    const auto gen = small("pcie_link_max_generation");
    const auto width = small("pcie_link_max_width");
    if (!gen || !width) return {std::nullopt, "NVML did not give the PCIe link"};
    const pcie_link link{*gen, *width};
    const auto one_way = pcie_bytes_per_s(link);
    if (!one_way) return {std::nullopt, fmt::format("PCIe Gen{} is not known", link.generation)};
    const double f = spec.row == "both" ? 2 * *one_way : *one_way;
    return {f, fmt::format("PCIe Gen{} x{}{}", link.generation, link.width,
                           spec.row == "both" ? ", both ways" : "")};
  }
  if (spec.point == "launch") return {20e-6, "a bound of 20 us"};
  if (spec.point == "fp32")
    return compute(cuda::cuda_core_flops_per_clock_per_sm(dtype::f32, info.cc_major, info.cc_minor),
                   "FP32");
  if (spec.point == "fp64")
    return compute(cuda::cuda_core_flops_per_clock_per_sm(dtype::f64, info.cc_major, info.cc_minor),
                   "FP64");
  return compute(gemm_flops_per_clock_per_sm(gemm_dtype::bf16, info.cc_major, info.cc_minor),
                 "bf16 tensor-core");
}

} // namespace

std::vector<check_outcome> judge_point(std::string_view point, const result& r,
                                       const cuda::device_info& info,
                                       std::optional<double> max_sm_mhz,
                                       const reference_set& references) {
  const model_reference* user = references.find(info.name);
  const model_reference* shipped = shipped_references().find(info.name);
  std::vector<check_outcome> out;
  for (const auto& spec : check_specs()) {
    if (spec.point != point) continue;
    const measurement* m = r.find(spec.row);
    check_outcome o;
    if (r.status == result_status::failed || r.status == result_status::error ||
        r.status == result_status::skipped) {
      o.id = std::string(spec.id);
      o.unit = std::string(spec.unit);
      o.verdict = r.status == result_status::skipped ? check_verdict::not_run : check_verdict::fail;
      o.reason = fmt::format(
          "{}: {} ({})", spec.title,
          r.status == result_status::failed ? "the results were wrong" : "could not run", r.reason);
      out.push_back(std::move(o));
      continue;
    }
    static const measurement none;
    const measurement& row = m != nullptr ? *m : none;
    const model_reference* ref = user != nullptr && user->checks.contains(spec.id) ? user : shipped;
    if (ref != nullptr && ref->checks.contains(spec.id)) {
      const auto source =
          fmt::format("{} of {}", ref == user ? references.source : "shipped", ref->date);
      // A shipped reference comes from other hosts: a host-dependent check keeps its
      // theoretical floor as the line it fails at.
      const auto floor = ref != user && spec.host_dependent
                             ? std::optional(theoretical_for(spec, info, max_sm_mhz, r))
                             : std::nullopt;
      o = judge_measured(spec, row, ref->checks.find(spec.id)->second, source,
                         floor ? &*floor : nullptr);
    } else {
      o = judge_theoretical(spec, row, theoretical_for(spec, info, max_sm_mhz, r));
      if (!references.models.empty())
        o.reason += fmt::format(" ({} has no {} for {})", references.source, spec.id, info.name);
    }
    out.push_back(std::move(o));
  }
  return out;
}

namespace {

/// Judges every check of `point` measured on `device` in this process.
std::vector<check_outcome> judge_here(std::string_view point, const result& r, int device,
                                      run_context& ctx, const check_setup& setup) {
  return judge_point(point, r, ctx.device(device).info, cuda::max_sm_clock_khz(device) / 1e3,
                     setup.references);
}

/// Measures a point, judges it, and measures it again once if a figure fails; every try's figure
/// and verdict are recorded.
result measure_and_judge(std::string_view point, int device, run_context& ctx,
                         const check_setup& setup, const std::function<result()>& measure) {
  result r = measure();
  auto outcomes = judge_here(point, r, device, ctx, setup);
  const auto failing = [](const std::vector<check_outcome>& v) {
    return std::any_of(v.begin(), v.end(),
                       [](const auto& o) { return o.verdict == check_verdict::fail; });
  };
  const auto record = [](check_outcome& o, const check_outcome& from) {
    o.tries.push_back({{"figure", from.figure ? json(*from.figure) : json()},
                       {"verdict", to_string(from.verdict)}});
  };
  for (auto& o : outcomes) record(o, o);
  if (failing(outcomes) && !interrupt_requested()) {
    result again = measure();
    auto second = judge_here(point, again, device, ctx, setup);
    for (std::size_t i = 0; i < second.size() && i < outcomes.size(); ++i) {
      second[i].tries = outcomes[i].tries;
      record(second[i], second[i]);
      if (outcomes[i].verdict == check_verdict::fail)
        second[i].reason +=
            fmt::format(" (measured twice: {} then {})", to_string(outcomes[i].verdict),
                        to_string(second[i].verdict));
    }
    r = std::move(again);
    outcomes = std::move(second);
  }
  json j = json::array();
  for (const auto& o : outcomes) j.push_back(to_json(o));
  r.derived["check"] = j;
  return r;
}

result run_check_point(const point_view& point, run_context& ctx, const check_setup& setup) {
  const std::string which = point.text("check");
  const int device = point.device();
  // --quick runs fewer points, each at the same size as the whole suite's, so one reference
  // serves both.
  std::function<result()> measure;
  if (which == "state") {
    result r = measure_state(device, ctx);
    r.params = point.values();
    return r;
  }
  if (which == "hbm")
    measure = [&] {
      return run_benchmark_point("stream", {{"n", "2^28"}, {"dtype", "f32"}}, device, ctx);
    };
  else if (which == "d2d")
    measure = [&] { return measure_d2d(device, ctx); };
  else if (which == "pcie")
    measure = [&] { return measure_pcie(device, ctx); };
  else if (which == "launch")
    measure = [&] { return measure_launch(device, ctx); };
  else if (which == "fp32" || which == "fp64")
    measure = [&] {
      return run_benchmark_point("roofline",
                                 {{"n", "2^27"},
                                  {"dtype", which == "fp32" ? "f32" : "f64"},
                                  {"intensity", which == "fp32" ? "1024" : "256"}},
                                 device, ctx);
    };
  else
    measure = [&] {
      return run_benchmark_point(
          "gemm",
          {{"m", "8192"}, {"n", "8192"}, {"k", "8192"}, {"dtype", "bf16"}, {"layout", "nn"}},
          device, ctx);
    };
  // A library the point needs that is missing (cuBLASLt for the tensor-core GEMM) makes its
  // checks not run, with the reason; the rest of the suite goes on.
  // Another gpubench check on this GPU (a rank sharing it) measures before or after, never
  // at the same time.
  const std::string uuid = cuda::device_uuid(device);
  bool waited = false;
  const auto guarded = [&]() -> result {
    try {
      const gpu_turn turn(uuid);
      waited = waited || turn.waited();
      return measure();
    } catch (const cuda::no_device_error& e) {
      result skipped;
      skipped.status = result_status::skipped;
      skipped.reason = e.what();
      return skipped;
    }
  };
  result r = measure_and_judge(which, device, ctx, setup, guarded);
  if (waited) r.derived["gpu_turn"] = "waited for another gpubench check on this GPU to finish";
  r.benchmark = "check";
  r.params = point.values();
  return r;
}

} // namespace

std::optional<double> pcie_bytes_per_s(const pcie_link& link) {
  // GB/s per lane after the line encoding: 8b/10b for Gen1-2, 128b/130b for Gen3-5, FLIT
  // (242 of 256 bytes) for Gen6.
  static constexpr double per_lane[] = {0.25e9,
                                        0.5e9,
                                        8e9 * 128 / 130 / 8,
                                        16e9 * 128 / 130 / 8,
                                        32e9 * 128 / 130 / 8,
                                        64e9 * 242 / 256 / 8};
  if (link.generation < 1 || link.generation > std::size(per_lane) || link.width == 0)
    return std::nullopt;
  return per_lane[link.generation - 1] * link.width;
}

benchmark make_check_benchmark(const std::shared_ptr<const check_setup>& setup) {
  benchmark b("check",
              "is this GPU as fast as it should be: a short suite judged against references",
              "Examples:\n  gpubench check\n");
  const auto all = check_points(false);
  b.params = {param_spec{.name = "check",
                         .help = "the suite's points",
                         .default_value = fmt::format("{}", fmt::join(all, ",")),
                         .sweepable = true,
                         .kind = param_kind::word,
                         .choices = all}};
  b.supports_cpu_only = false;
  b.run_point = [setup](const point_view& point, run_context& ctx) {
    return run_check_point(point, ctx, *setup);
  };
  complete_declaration(b);
  return b;
}

} // namespace gpubench
