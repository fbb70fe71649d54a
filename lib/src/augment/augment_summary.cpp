// augment's summary under the table: images/s of every implementation and the speedups, one
// line a batch (augment_bench.hpp).
#include "gpubench/augment/augment_bench.hpp"

#include "gpubench/report/report.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <string>

namespace gpubench {
namespace {

/// A summary cell's rate without its unit (the title gives it): "3.34 k", "1.4 M", "66.1".
std::string rate_cell(double v) {
  if (v >= 1e6) return fmt::format("{:.3g} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.3g} k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

} // namespace

void write_augment_summary(std::ostream& os, const std::vector<const result*>& results) {
  const auto rate_of = [](const result& r, const char* name) -> std::string {
    const auto it = r.derived.find(fmt::format("{}_images_per_s", name));
    return it == r.derived.end() ? "" : rate_cell(it->get<double>());
  };
  const auto speedup = [](const result& r, const std::string& key) -> std::string {
    const auto it = r.derived.find(key);
    return it == r.derived.end() ? "" : fmt::format("{:.2f}x", it->get<double>());
  };
  os << "augment summary (images/s from the median; speedups compare medians)\n";
  // The shared table writer (text_table.hpp): columns as wide as their widest cell.
  text_table t;
  t.header = {"batch", "cpu_reference", "cpu_opencv", "opencv/ref",    "staged",
              "fused", "fused/staged",  "fused/cpu",  "fused+h2d/cpu", "verification"};
  t.right = {true, true, true, true, true, true, true, true, true, false};
  std::map<std::string, std::vector<std::string>> baseline_batches; // fastest CPU row -> batches
  std::string absent;
  for (const result* r : results) {
    if (r->status == result_status::skipped || r->status == result_status::error) continue;
    // Files written before the OpenCV row name no fastest row: theirs is the reference.
    const std::string fastest =
        r->derived.value("fastest_cpu", r->find("cpu_reference") != nullptr ? "cpu_reference" : "");
    const std::string batch = std::to_string(r->params.value("batch", 0));
    if (!fastest.empty()) baseline_batches[fastest].push_back(batch);
    const auto it = r->derived.find("cpu_opencv_absent");
    if (it != r->derived.end()) absent = it->get<std::string>();
    t.rows.push_back({batch, rate_of(*r, "cpu_reference"),
                      it != r->derived.end() ? "not built in" : rate_of(*r, "cpu_opencv"),
                      speedup(*r, "speedup_cpu_opencv_vs_cpu_reference"), rate_of(*r, "staged"),
                      rate_of(*r, "fused"), speedup(*r, "speedup_fused_vs_staged"),
                      fastest.empty() ? "" : speedup(*r, "speedup_fused_vs_" + fastest),
                      fastest.empty() ? "" : speedup(*r, "speedup_fused_with_upload_vs_" + fastest),
                      verification_word(r->verify)});
  }
  write_text_table(os, t);
  // Which CPU row the speedups are quoted against, and why OpenCV's is missing.
  if (!absent.empty())
    write_wrapped(os, fmt::format("cpu_opencv: {}; the CPU baseline is cpu_reference", absent),
                  output_width(), "", "  ");
  std::string against;
  for (const auto& [row, batches] : baseline_batches)
    against += fmt::format("{}{}{}", against.empty() ? "" : "; ", row,
                           baseline_batches.size() > 1
                               ? fmt::format(" (batch {})", fmt::join(batches, ", "))
                               : std::string());
  const bool any_gpu = std::any_of(results.begin(), results.end(), [](const result* r) {
    return r->derived.contains("speedup_fused_vs_cpu_reference") ||
           r->derived.contains("speedup_fused_vs_cpu_opencv");
  });
  if (any_gpu && !against.empty())
    write_wrapped(
        os, fmt::format("fused/cpu and fused+h2d/cpu are against the fastest CPU row: {}", against),
        output_width(), "", "  ");
  os << "\n";
}

} // namespace gpubench
