// libFuzzer target: run files (lib/src/run_file.cpp), untrusted input to `gpubench run`. Any
// document either parses and plans or throws usage_error naming what is wrong; nothing else.
#include "gpubench/benchmark.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/options.hpp"
#include "gpubench/run_file.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded())
    return 0; // syntax errors are nlohmann's parser's, reported by load_run_file as such
  try {
    const auto file = gpubench::parse_run_file(j, gpubench::all_benchmarks());
    gpubench::common_options opts;
    std::string device = "0";
    gpubench::apply_run_file_options(file.options, opts, device,
                                     [](std::string_view) { return false; });
    const auto points = gpubench::plan_run_file(file, opts);
    std::ostringstream sink;
    gpubench::write_plan(sink, file, points, gpubench::output_format::table);
    gpubench::write_plan(sink, file, points, gpubench::output_format::json);
  } catch (const gpubench::usage_error&) {
  }
  return 0;
}
