// libFuzzer target: saved result files, read by `compare` and `report` as load_report reads them
// (parse_untrusted_json, then report_from_json in lib/src/results/result.cpp). Any document either
// loads or throws usage_error with a bounded message; what loads can be merged, rendered in every
// format (a check result also as its verdict table, JUnit and Prometheus text, made into a
// reference, and judged again as `check --from` judges it), compared with itself and written back
// as JSON. Inputs are structure-aware (expand.hpp): a few bytes reach 100,000 levels of nesting or
// megabytes.
#include "expand.hpp"

#include "gpubench/check/check_report.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/gate/compare.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gpubench::fuzz::expand(data, size);
  try {
    const auto j = gpubench::parse_untrusted_json(text, "fuzz.json");
    const auto report = gpubench::report_from_json(j);
    const std::vector<gpubench::run_report> twice{report, report};
    const auto merged = gpubench::merge_reports(twice);
    const auto c = gpubench::compare_reports(report, report, {});
    std::ostringstream sink;
    for (const auto format : {gpubench::output_format::table, gpubench::output_format::json,
                              gpubench::output_format::csv, gpubench::output_format::md}) {
      gpubench::write_report(sink, merged, format);
      gpubench::write_comparison(sink, c, format);
    }
    // A check result: its outcomes read strictly, every check format, a reference built from it.
    if (gpubench::is_check_report(merged)) {
      for (const auto format : {gpubench::check_format::table, gpubench::check_format::junit,
                                gpubench::check_format::prometheus})
        sink << gpubench::render_check(merged, format, true, 80);
      (void)gpubench::build_reference(merged);
      // Judged again as `check --from` does (shipped references), then finished and rendered.
      gpubench::run_report judged = report;
      gpubench::rejudge_checks(judged, {});
      gpubench::finish_checks(judged);
      sink << gpubench::render_check(judged, gpubench::check_format::table, false, 100);
    }
    // What was read must read back the same after writing.
    const auto again = gpubench::report_from_json(gpubench::to_json(report));
    if (again.results.size() != report.results.size()) __builtin_trap();
  } catch (const gpubench::usage_error& e) {
    const std::string_view what = e.what();
    if (what.size() > 1000 || what.find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
