// libFuzzer target: saved result files, read by `compare` and `report` (report_from_json in
// lib/src/result.cpp). Any document either loads or throws usage_error; what loads can be
// merged, rendered in every format, compared with itself and written back as JSON.
#include "gpubench/compare.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/report.hpp"
#include "gpubench/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
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
    // What was read must read back the same after writing.
    const auto again = gpubench::report_from_json(gpubench::to_json(report));
    if (again.results.size() != report.results.size()) __builtin_trap();
  } catch (const gpubench::usage_error&) {
  }
  return 0;
}
