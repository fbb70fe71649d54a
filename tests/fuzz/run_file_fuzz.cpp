// libFuzzer target: run files (lib/src/engine/run_file.cpp), untrusted input to `gpubench run`,
// read as load_run_file reads them (parse_untrusted_json). Any document either parses and plans or
// throws usage_error naming what is wrong, in a message of bounded length; nothing else. Inputs are
// structure-aware (expand.hpp): a few bytes reach 100,000 levels of nesting or megabytes.
#include "expand.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/options.hpp"
#include "gpubench/engine/run_file.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/registry/registry.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gpubench::fuzz::expand(data, size);
  try {
    const auto j = gpubench::parse_untrusted_json(text, "fuzz.json");
    const auto file = gpubench::parse_run_file(j, gpubench::all_benchmarks());
    gpubench::common_options opts;
    std::string device = "0";
    gpubench::apply_run_file_options(file.options, opts, device,
                                     [](std::string_view) { return false; });
    const auto points = gpubench::plan_run_file(file, opts);
    std::ostringstream sink;
    gpubench::write_plan(sink, file, points, gpubench::output_format::table);
    gpubench::write_plan(sink, file, points, gpubench::output_format::json);
  } catch (const gpubench::usage_error& e) {
    // One line, quoting briefly whatever the input held (docs/errors.md, "Hostile input").
    const std::string_view what = e.what();
    if (what.size() > 1000 || what.find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
