// The measured checks and their verdict rules (docs/check.md, "How a figure is judged").
#include "gpubench/check/check.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/stats.hpp"
#include "gpubench/gate/gate_stats.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace gpubench {

using nlohmann::json;

std::string_view to_string(check_verdict v) noexcept {
  switch (v) {
  case check_verdict::pass: return "pass";
  case check_verdict::warn: return "warn";
  case check_verdict::fail: return "fail";
  case check_verdict::not_run: return "not_run";
  }
  return "not_run";
}

std::optional<check_verdict> parse_check_verdict(std::string_view s) noexcept {
  for (const auto v :
       {check_verdict::pass, check_verdict::warn, check_verdict::fail, check_verdict::not_run})
    if (s == to_string(v)) return v;
  return std::nullopt;
}

check_verdict worse(check_verdict a, check_verdict b) noexcept {
  const auto rank = [](check_verdict v) {
    switch (v) {
    case check_verdict::not_run: return 0;
    case check_verdict::pass: return 1;
    case check_verdict::warn: return 2;
    case check_verdict::fail: return 3;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

const std::vector<check_spec>& check_specs() {
  // The limits: a healthy GPU's repeats move HBM and the FMA roofs by well under 1%, PCIe by a few
  // percent (a shared root port), the tensor-core GEMM with the power cap's clock, a launch's
  // round trip with the host's scheduling. Each fail_fraction sits above that and below the
  // faults the check is for (a 5% slower HBM, a link at half width).
  static const std::vector<check_spec> specs = {
      {"hbm_copy", "HBM copy", "hbm", "copy", "B/s", true, 0.015, 0.03, 0.80,
       "a healthy GPU of this model copies faster: look for a clock held low or another process"},
      {"hbm_triad", "HBM triad", "hbm", "triad", "B/s", true, 0.015, 0.03, 0.80,
       "a healthy GPU of this model streams faster: look for a clock held low or another process"},
      {"d2d_copy", "device copy", "d2d", "d2d", "B/s", true, 0.02, 0.04, 0.75,
       "cudaMemcpy on the device is slow: look for a memory clock held low"},
      {"pcie_h2d", "PCIe host to device", "pcie", "h2d", "B/s", true, 0.03, 0.08, 0.70,
       "check the link's width and generation, the slot and the CPU socket the GPU hangs off",
       true},
      {"pcie_d2h", "PCIe device to host", "pcie", "d2h", "B/s", true, 0.03, 0.08, 0.70,
       "check the link's width and generation, the slot and the CPU socket the GPU hangs off",
       true},
      // Both ways at once the host's share is larger: healthy H100 hosts measured 57-74% of the
      // theoretical figure (docs/check.md), so its floor sits lower than one direction's.
      {"pcie_both", "PCIe both ways", "pcie", "both", "B/s", true, 0.05, 0.12, 0.50,
       "the link cannot carry both directions at once: check the slot, the switch and IOMMU", true},
      {"launch_latency", "launch round trip", "launch", "launch", "s", false, 0.25, 0.60, 20e-6,
       "kernel launches are slow: look for a busy host, CPU frequency scaling or a slow driver",
       true},
      {"fp32_fma", "FP32 FMA", "fp32", "kernel", "FLOP/s", true, 0.02, 0.05, 0.80,
       "the SMs compute slower than this model's: look for a clock held low"},
      {"fp64_fma", "FP64 FMA", "fp64", "kernel", "FLOP/s", true, 0.02, 0.05, 0.80,
       "the SMs compute slower than this model's: look for a clock held low"},
      {"tensor_bf16", "tensor-core GEMM bf16", "tensor", "kernel", "FLOP/s", true, 0.04, 0.10, 0.55,
       "the tensor cores run slower than this model's: look for the power limit or cooling"},
  };
  return specs;
}

const check_spec* find_check_spec(std::string_view id) noexcept {
  for (const auto& s : check_specs())
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<std::string> check_points(bool quick) {
  if (quick) return {"state", "hbm", "pcie", "launch", "fp32"};
  return {"state", "hbm", "d2d", "pcie", "launch", "fp32", "fp64", "tensor"};
}

std::string check_figure_text(double v, std::string_view unit) {
  if (unit == "s")
    return v < 1e-3 ? fmt::format("{:.3g} us", v * 1e6) : fmt::format("{:.3g} ms", v * 1e3);
  if (unit == "GenWidth") {
    const int gen = static_cast<int>(v / 100);
    return fmt::format("Gen{} x{}", gen, static_cast<int>(std::lround(v - gen * 100.0)));
  }
  if (unit == "B/s" || unit == "FLOP/s") {
    constexpr std::array<std::pair<double, const char*>, 4> prefixes = {
        {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
    for (const auto& [scale, prefix] : prefixes)
      if (v >= scale) return fmt::format("{:.3g} {}{}", v / scale, prefix, unit);
  }
  return fmt::format("{:.4g} {}", v, unit);
}

const model_reference* reference_set::find(std::string_view model) const noexcept {
  for (const auto& m : models)
    if (m.model == model) return &m;
  return nullptr;
}

std::optional<double> row_figure(const check_spec& spec, const measurement& m) {
  if (m.samples.empty() || !(m.stats.median > 0)) return std::nullopt;
  if (!spec.higher_is_better) return m.stats.median;
  const double work = spec.unit == "FLOP/s" ? m.work.flops : m.work.bytes;
  if (!(work > 0)) return std::nullopt;
  return work / m.stats.median;
}

std::vector<double> row_sample_figures(const check_spec& spec, const measurement& m) {
  std::vector<double> out;
  const double work = spec.unit == "FLOP/s" ? m.work.flops : m.work.bytes;
  for (const double t : m.samples) {
    if (!(t > 0)) continue;
    out.push_back(spec.higher_is_better ? work / t : t);
  }
  return out;
}

namespace {

/// Cost (lower is better) of a figure: time per unit of work, or the latency itself.
double cost_of(const check_spec& spec, double figure) {
  return spec.higher_is_better ? 1.0 / figure : figure;
}

check_outcome outcome_for(const check_spec& spec, std::optional<double> figure) {
  check_outcome o;
  o.id = std::string(spec.id);
  o.unit = std::string(spec.unit);
  o.figure = figure;
  return o;
}

/// Against the theoretical figure, the share of the floor (a latency: of the bound's score) down
/// to which a figure warns; below it, it fails.
constexpr double theoretical_warn_share = 0.9;

/// The figure past which the theoretical rule fails (that share of the floor; a latency: the
/// bound over it), and how the reason names it.
std::pair<double, std::string> failing_bound(const check_spec& spec, const theoretical_figure& t) {
  if (spec.higher_is_better) {
    const double bound = theoretical_warn_share * spec.theoretical_fraction * *t.figure;
    return {bound, fmt::format("below {} ({:.0f}% of the theoretical {}, {})",
                               check_figure_text(bound, spec.unit),
                               100 * theoretical_warn_share * spec.theoretical_fraction,
                               check_figure_text(*t.figure, spec.unit), t.basis)};
  }
  const double bound = *t.figure / theoretical_warn_share;
  return {bound, fmt::format("above {} ({})", check_figure_text(bound, spec.unit), t.basis)};
}

} // namespace

check_outcome judge_measured(const check_spec& spec, const measurement& m,
                             const reference_entry& ref, std::string_view source,
                             const theoretical_figure* host_floor) {
  check_outcome o = outcome_for(spec, row_figure(spec, m));
  o.reference = ref.median;
  o.reference_kind = "measured";
  o.reference_source = std::string(source);
  if (!o.figure) {
    o.reason = fmt::format("{}: no sample was taken", spec.title);
    return o;
  }
  o.ratio = *o.figure / ref.median;
  std::vector<double> base;
  std::vector<double> now;
  // The reference's samples, or its median alone when it holds none. The samples are one run's
  // (the run nearest the median of the runs, whose own median may lie a few percent off it): they
  // give the shape of a run's distribution, centred here on the reference's median.
  std::vector<double> ref_figures;
  for (const double f : ref.samples.empty() ? std::vector<double>{ref.median} : ref.samples)
    if (f > 0) ref_figures.push_back(f);
  const double ref_samples_median = summarize(ref_figures).median;
  const double centre = ref_samples_median > 0 ? ref.median / ref_samples_median : 1.0;
  base.reserve(ref_figures.size());
  for (const double f : ref_figures) base.push_back(cost_of(spec, f * centre));
  for (const double f : row_sample_figures(spec, m)) now.push_back(cost_of(spec, f));
  const double base_cost = cost_of(spec, ref.median);
  const auto shift = hodges_lehmann(base, now, 0.95);
  const double est = shift.estimate / base_cost;
  const gate_limits limits{spec.fail_fraction, spec.warn_fraction, ref.spread};
  const verdict v =
      judge_interval(shift.lo / base_cost, shift.hi / base_cost, shift.bounded, limits);
  const std::string where = fmt::format(
      "{} {} against {} ({}, {:+.1f}%", spec.title, check_figure_text(*o.figure, spec.unit),
      check_figure_text(ref.median, spec.unit), source, 100 * (*o.ratio - 1));
  // What the verdict judged: the shift of the samples' costs, which can differ from the ratio of
  // the medians when the distributions differ in shape (a clock the power cap moves).
  const std::string judged =
      fmt::format("{}; samples {:.1f}% slower, 95% interval {:.1f}% to {:.1f}%", where, 100 * est,
                  100 * shift.lo / base_cost, 100 * shift.hi / base_cost);
  const bool floor_known = host_floor != nullptr && host_floor->figure && *host_floor->figure > 0;
  if (v == verdict::slower && floor_known) {
    // Held to other hosts' figures: only the theoretical floor fails a host-dependent check.
    const auto [bound, text] = failing_bound(spec, *host_floor);
    const bool past = spec.higher_is_better ? *o.figure < bound : *o.figure > bound;
    o.verdict = past ? check_verdict::fail : check_verdict::warn;
    o.reason = fmt::format("{}; limit {:.1f}%), against a reference from other hosts, and this "
                           "figure depends on the host: it {} {}: {}",
                           judged, 100 * spec.fail_fraction, past ? "fails, being" : "fails only",
                           text, spec.advice);
  } else if (v == verdict::slower) {
    o.verdict = check_verdict::fail;
    o.reason = fmt::format("{}; limit {:.1f}%): {}", judged, 100 * spec.fail_fraction, spec.advice);
  } else if (est > spec.warn_fraction + ref.spread) {
    // The warning line, like the failing one, sits the reference's spread between healthy runs
    // further out: a figure that varies between runs by more than the line would warn on them.
    o.verdict = check_verdict::warn;
    o.reason = fmt::format("{}; warns past {:.1f}%): {}", judged,
                           100 * (spec.warn_fraction + ref.spread), spec.advice);
  } else {
    o.verdict = check_verdict::pass;
    o.reason = where + ")";
  }
  return o;
}

check_outcome judge_theoretical(const check_spec& spec, const measurement& m,
                                const theoretical_figure& t) {
  check_outcome o = outcome_for(spec, row_figure(spec, m));
  o.reference_kind = "theoretical";
  o.reference_source = t.basis;
  if (!t.figure || !(*t.figure > 0)) {
    o.reason = fmt::format("{}: no reference for this GPU ({})", spec.title, t.basis);
    return o;
  }
  o.reference = *t.figure;
  if (!o.figure) {
    o.reason = fmt::format("{}: no sample was taken", spec.title);
    return o;
  }
  o.ratio = *o.figure / *t.figure;
  // Held to a fraction of the peak (a latency: to a multiple of its bound, inverted).
  const double score =
      spec.higher_is_better ? *o.ratio / spec.theoretical_fraction : *t.figure / *o.figure;
  const std::string where =
      spec.higher_is_better
          ? fmt::format("{} {} is {:.1f}% of the theoretical {} ({}; passes at {:.0f}%)",
                        spec.title, check_figure_text(*o.figure, spec.unit), 100 * *o.ratio,
                        check_figure_text(*t.figure, spec.unit), t.basis,
                        100 * spec.theoretical_fraction)
          : fmt::format("{} {} against a bound of {} ({})", spec.title,
                        check_figure_text(*o.figure, spec.unit),
                        check_figure_text(*t.figure, spec.unit), t.basis);
  if (score >= 1) {
    o.verdict = check_verdict::pass;
    o.reason = where + "; the reference is theoretical";
  } else if (score >= theoretical_warn_share) {
    o.verdict = check_verdict::warn;
    o.reason = fmt::format("{}; the reference is theoretical: {}", where, spec.advice);
  } else {
    o.verdict = check_verdict::fail;
    o.reason = fmt::format("{}; the reference is theoretical: {}", where, spec.advice);
  }
  return o;
}

json to_json(const check_outcome& o) {
  json j = {{"id", o.id},
            {"verdict", to_string(o.verdict)},
            {"unit", o.unit},
            {"reason", o.reason},
            {"reference_kind", o.reference_kind},
            {"reference_source", o.reference_source},
            {"tries", o.tries}};
  j["figure"] = o.figure ? json(*o.figure) : json();
  j["reference"] = o.reference ? json(*o.reference) : json();
  j["ratio"] = o.ratio ? json(*o.ratio) : json();
  if (!o.outlier.is_null()) j["outlier"] = o.outlier;
  return j;
}

namespace {

std::string text_at(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string() || !printable_field(it->get_ref<const std::string&>()))
    throw usage_error(fmt::format("{}.{}: expected {}", where, key, printable_field_rule()));
  return it->get<std::string>();
}

std::optional<double> number_at(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw usage_error(fmt::format("{}.{}: expected a finite number or null", where, key));
  return it->get<double>();
}

} // namespace

check_outcome check_outcome_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw usage_error(fmt::format("{}: expected an object", where));
  check_outcome o;
  o.id = text_at(j, "id", where);
  const auto v = parse_check_verdict(text_at(j, "verdict", where));
  if (!v) throw usage_error(fmt::format("{}.verdict: expected pass, warn, fail or not_run", where));
  o.verdict = *v;
  o.unit = text_at(j, "unit", where);
  o.reason = text_at(j, "reason", where);
  o.reference_kind = text_at(j, "reference_kind", where);
  o.reference_source = text_at(j, "reference_source", where);
  o.figure = number_at(j, "figure", where);
  o.reference = number_at(j, "reference", where);
  o.ratio = number_at(j, "ratio", where);
  if (const auto it = j.find("tries"); it != j.end() && it->is_array()) o.tries = *it;
  if (const auto it = j.find("outlier"); it != j.end() && it->is_object()) o.outlier = *it;
  return o;
}

} // namespace gpubench
