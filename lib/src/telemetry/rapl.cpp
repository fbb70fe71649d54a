// The CPU reference's energy from RAPL (/sys/class/powercap): package domains, an idle baseline
// and three windows of the reference.
#include "gpubench/core/clock.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/telemetry/energy.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gpubench {

using nlohmann::json;

namespace {

/// Package-level RAPL domains (intel-rapl:N, not their sub-zones) and their counter ranges.
struct rapl_domain {
  std::filesystem::path energy;
  double range_uj = 0;
};

std::vector<rapl_domain> rapl_domains(std::string& why) {
  namespace fs = std::filesystem;
  std::vector<rapl_domain> out;
  const fs::path root = "/sys/class/powercap";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why = "no /sys/class/powercap";
    return out;
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const auto name = entry.path().filename().string();
    if (name.rfind("intel-rapl:", 0) != 0 || name.find(':', 11) != std::string::npos) continue;
    rapl_domain d;
    d.energy = entry.path() / "energy_uj";
    std::ifstream range(entry.path() / "max_energy_range_uj");
    range >> d.range_uj;
    std::ifstream probe(d.energy);
    double v = -1;
    if (!(probe >> v)) {
      why = fmt::format("{} is not readable (RAPL is often root-only)", d.energy.string());
      return {};
    }
    out.push_back(d);
  }
  if (out.empty() && why.empty()) why = "no RAPL package domain under /sys/class/powercap";
  return out;
}

double read_uj(const rapl_domain& d) {
  std::ifstream in(d.energy);
  double v = 0;
  in >> v;
  return v;
}

} // namespace

json measure_cpu_energy(const std::function<void()>& body, double ops_per_call,
                        const std::string& op_unit, const energy_options& o) {
  std::string why;
  const auto domains = rapl_domains(why);
  if (domains.empty()) return energy_unsupported(why);
  const auto total_j = [&](const std::vector<double>& before) {
    double j = 0;
    for (std::size_t i = 0; i < domains.size(); ++i) {
      double d = read_uj(domains[i]) - before[i];
      if (d < 0) d += domains[i].range_uj; // the counter wrapped
      j += d * 1e-6;
    }
    return j;
  };
  const auto snapshot = [&] {
    std::vector<double> v;
    v.reserve(domains.size());
    for (const auto& d : domains) v.push_back(read_uj(d));
    return v;
  };
  // Idle baseline, then three windows of the reference: RAPL updates about every millisecond, so
  // its windows need no random phase; three keep the cost bounded.
  auto before = snapshot();
  double t0 = steady_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.min_window_s));
  const double idle_w = total_j(before) / (steady_seconds() - t0);
  std::vector<energy_window> windows;
  for (int w = 0; w < 3 && !interrupt_requested(); ++w) {
    before = snapshot();
    t0 = steady_seconds();
    double calls = 0;
    while (steady_seconds() - t0 < o.min_window_s) {
      body();
      calls += 1;
    }
    energy_window win;
    win.seconds = steady_seconds() - t0;
    win.counter_j = total_j(before);
    win.integral_j = win.counter_j; // no second source on the CPU
    win.ops = calls * ops_per_call;
    windows.push_back(win);
  }
  auto j = summarize_energy(windows, idle_w, 0.001, o.min_window_s, op_unit, 0, o);
  if (j.value("supported", false)) {
    j["source"] = "rapl_package";
    j.erase("counter_vs_integral"); // no second source on the CPU
    j["disagreement_flag"] = false;
  }
  return j;
}

} // namespace gpubench
