// The state rules of `gpubench check` (docs/check.md, "The GPU's state").
#include "gpubench/check/check_suite.hpp"

#include <fmt/format.h>

namespace gpubench {

namespace {

check_outcome rule(std::string id, check_verdict v, std::string reason) {
  check_outcome o;
  o.id = std::move(id);
  o.verdict = v;
  o.reason = std::move(reason);
  o.reference_kind = "rule";
  return o;
}

check_outcome unread(std::string id, const std::string& what, const std::string& why) {
  return rule(std::move(id), check_verdict::not_run,
              fmt::format("{} not checked: NVML did not answer ({})", what, why));
}

check_outcome judge_link(const gpu_state& s) {
  if (!s.link_now.value) return unread("pcie_link", "PCIe link", s.link_now.error);
  if (!s.link_max.value) return unread("pcie_link", "PCIe link", s.link_max.error);
  const auto& now = *s.link_now.value;
  const auto& max = *s.link_max.value;
  check_outcome o;
  const auto text = [](const pcie_link& l) {
    return fmt::format("Gen{} x{}", l.generation, l.width);
  };
  if (now.width < max.width)
    o = rule(
        "pcie_link", check_verdict::fail,
        fmt::format("PCIe link at {} under load, this GPU and slot train to {}: reseat the GPU "
                    "or check the slot and its riser",
                    text(now), text(max)));
  else if (now.generation < max.generation)
    o = rule("pcie_link", check_verdict::fail,
             fmt::format("PCIe link at {} under load, this GPU and slot train to {}: check the "
                         "slot's BIOS setting (link speed) and reseat the GPU",
                         text(now), text(max)));
  else if (s.gpu_max_link_generation.value && max.generation < *s.gpu_max_link_generation.value)
    o = rule("pcie_link", check_verdict::warn,
             fmt::format("PCIe link at {}: the GPU supports Gen{}, the slot or its BIOS setting "
                         "caps it at Gen{}",
                         text(now), *s.gpu_max_link_generation.value, max.generation));
  else
    o = rule("pcie_link", check_verdict::pass,
             fmt::format("PCIe link at {} under load, the most it supports", text(now)));
  o.figure = now.generation * 100.0 + now.width;
  o.unit = "GenWidth";
  return o;
}

check_outcome judge_ecc(const gpu_state& s) {
  if (!s.ecc_enabled.value) return unread("ecc", "ECC", s.ecc_enabled.error);
  if (!*s.ecc_enabled.value)
    return rule("ecc", check_verdict::warn,
                "ECC is off: memory errors go unseen; enable it (nvidia-smi -e 1, then a reset)");
  if (!s.ecc_uncorrected_volatile.value)
    return unread("ecc", "ECC error counts", s.ecc_uncorrected_volatile.error);
  const auto unc = *s.ecc_uncorrected_volatile.value;
  auto o =
      unc > 0
          ? rule("ecc", check_verdict::fail,
                 fmt::format("{} uncorrectable ECC errors since the driver loaded: drain "
                             "the node and run the vendor's diagnostics",
                             unc))
          : rule("ecc", check_verdict::pass,
                 fmt::format("ECC on, no uncorrectable error since the driver loaded{}",
                             s.ecc_corrected_volatile.value
                                 ? fmt::format(" ({} corrected)", *s.ecc_corrected_volatile.value)
                                 : std::string()));
  o.figure = static_cast<double>(unc);
  o.unit = "errors";
  return o;
}

check_outcome judge_remapped(const gpu_state& s) {
  if (!s.remapped.value) return unread("remapped_rows", "Row remapping", s.remapped.error);
  const auto& r = *s.remapped.value;
  if (r.failed)
    return rule("remapped_rows", check_verdict::fail,
                "a row remap failed: the GPU has run out of spare rows; have it replaced");
  if (r.pending)
    return rule("remapped_rows", check_verdict::warn,
                "a row remap is pending: reset the GPU (or reboot the node) to apply it");
  return rule("remapped_rows", check_verdict::pass,
              fmt::format("rows remapped: {} for correctable, {} for uncorrectable errors, none "
                          "pending",
                          r.correctable, r.uncorrectable));
}

check_outcome judge_power(const gpu_state& s) {
  if (!s.power_limit_w.value) return unread("power_limit", "Power limit", s.power_limit_w.error);
  if (!s.power_default_limit_w.value)
    return unread("power_limit", "Power limit", s.power_default_limit_w.error);
  const double now = *s.power_limit_w.value;
  const double def = *s.power_default_limit_w.value;
  auto o = now < 0.95 * def
               ? rule("power_limit", check_verdict::warn,
                      fmt::format("power limit {:.0f} W, below the default {:.0f} W: the clocks "
                                  "fall sooner under load (nvidia-smi -pl {:.0f} restores it)",
                                  now, def, def))
               : rule("power_limit", check_verdict::pass,
                      fmt::format("power limit {:.0f} W (default {:.0f} W)", now, def));
  o.figure = now;
  o.reference = def;
  o.ratio = def > 0 ? now / def : 0;
  o.unit = "W";
  return o;
}

check_outcome judge_modes(const gpu_state& s) {
  if (!s.mig.value) return unread("mig_mode", "MIG mode", s.mig.error);
  if (*s.mig.value)
    return rule("mig_mode", check_verdict::warn,
                "MIG mode is on: the suite measured one slice, not the whole GPU");
  return rule("mig_mode", check_verdict::pass, "MIG mode off");
}

check_outcome judge_persistence(const gpu_state& s) {
  if (!s.persistence.value) return unread("persistence", "Persistence mode", s.persistence.error);
  // Off is a choice, not a fault: said, never failed.
  return rule("persistence", check_verdict::pass,
              *s.persistence.value
                  ? std::string("persistence mode on")
                  : std::string("persistence mode off: each process's first CUDA call waits for "
                                "the driver to start the GPU (nvidia-persistenced avoids it)"));
}

check_outcome judge_temperature(const gpu_state& s) {
  if (!s.temperature_c.value) return unread("temperature", "Temperature", s.temperature_c.error);
  const unsigned t = *s.temperature_c.value;
  check_outcome o;
  if (s.slowdown_temperature_c.value && t >= *s.slowdown_temperature_c.value)
    o = rule("temperature", check_verdict::fail,
             fmt::format("{} C, at or past the GPU's slowdown threshold of {} C: check the "
                         "cooling and the airflow",
                         t, *s.slowdown_temperature_c.value));
  else if (s.slowdown_temperature_c.value && t + 5 >= *s.slowdown_temperature_c.value)
    o = rule("temperature", check_verdict::warn,
             fmt::format("{} C, within 5 C of the slowdown threshold of {} C: check the cooling", t,
                         *s.slowdown_temperature_c.value));
  else
    o = rule("temperature", check_verdict::pass,
             s.slowdown_temperature_c.value
                 ? fmt::format("{} C (slows down at {} C)", t, *s.slowdown_temperature_c.value)
                 : fmt::format("{} C", t));
  o.figure = t;
  o.unit = "C";
  return o;
}

} // namespace

std::vector<check_outcome> judge_state(const gpu_state& s) {
  if (!s.unavailable.empty())
    return {rule(
        "state", check_verdict::not_run,
        fmt::format("the GPU's state was not checked: NVML is not available ({})", s.unavailable))};
  return {judge_link(s),  judge_ecc(s),         judge_remapped(s),   judge_power(s),
          judge_modes(s), judge_persistence(s), judge_temperature(s)};
}

} // namespace gpubench
