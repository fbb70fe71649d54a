#pragma once
// A benchmark declares its parameters once, as a typed table: the CLI turns the table into
// --options with their types, ranges and help, run files use the same names, the planner
// (plan_from_table) parses, range-checks and expands them into points (JSON objects), and a
// driver reads its point through a typed point_view (point.hpp). The runner
// (runner.hpp) runs the points and does what every benchmark repeats: progress, interruption,
// the verdict of a failed verification, peak fractions and speedup ratios.
#include "gpubench/engine/context.hpp"
#include "gpubench/results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpubench {

class point_view;

/// How a parameter's text is read and what its value in a point is.
enum class param_kind {
  size,         ///< 10M, 2^28, 1Mi (sizes.hpp), within [min, max]; a JSON integer
  number,       ///< a finite number within [min, max] (min excluded when min_exclusive)
  numbers,      ///< one number or a comma list of them, as one value; a JSON array
  word,         ///< one of `choices`; a JSON string
  words,        ///< a set of `choices` ("all" for every one), not a sweep; a comma-joined string
  word_or_size, ///< one of `choices` or a size within [min, max]; a JSON string
  text,         ///< free text the benchmark checks itself (e.g. LO:HI); a JSON string
  path,         ///< a file or directory; a JSON string
};

struct param_spec {
  std::string name{};          ///< option name without dashes, also the run-file and point key
  std::string help{};          ///< one line for --help (the type and range are added to it)
  std::string default_value{}; ///< as typed on the command line; "" means unset (left out)
  bool sweepable = false;      ///< accepts a list or range, one point per value
  param_kind kind = param_kind::text;
  double min = 0; ///< size, number, word_or_size (no range when max <= min)
  double max = 0;
  bool min_exclusive = false;         ///< number: (min, max] instead of [min, max]
  std::uint64_t multiple_of = 0;      ///< size: 0 for any
  std::vector<std::string> choices{}; ///< word, words, word_or_size
  std::string metavar{};              ///< overrides the type shown in --help (e.g. LO:HI)
  bool gpu_only = false;              ///< left out of the points of a --cpu-only run
  bool in_point = true;               ///< false: only read by the benchmark's finish step
  std::pair<std::string, std::string> only_when{}; ///< {key, value}: only in points where it holds
  std::string unit{}; ///< after the range in messages and --help ("elements")
};

/// Parameter values as text, exactly as written on the command line ("1M:1G:x4", "f32,f16").
using param_values = std::map<std::string, std::string, std::less<>>;

/// A derived figure the runner computes for every point: median(numerator) / median(denominator).
struct derived_ratio {
  std::string key;
  std::string numerator;
  std::string denominator;
};

/// What the runner does after each point, so that no benchmark repeats it (complete_point() in
/// runner.hpp).
struct point_plumbing {
  std::vector<derived_ratio> ratios;         ///< speedups and the like, from the medians
  std::vector<std::string> peak_fraction_of; ///< GPU measurements given % of the device's peaks
  std::string verify_failure;                ///< the reason of a point whose check failed
};

struct benchmark {
  benchmark() = default;
  /// The three texts every benchmark states first: its name, its one-line summary, its examples.
  benchmark(std::string name_, std::string summary_, std::string examples_)
      : name(std::move(name_)), summary(std::move(summary_)), examples(std::move(examples_)) {}

  std::string name;
  std::string summary;  ///< one line
  std::string examples; ///< shown at the end of --help
  std::vector<param_spec> params;
  bool supports_cpu_only = true; ///< false: --cpu-only is not offered (the benchmark needs a GPU)

  /// Optional: cross-parameter checks and canonical forms of one expanded point, with the typed
  /// values of every parameter (those left out of points included). Throws usage_error.
  std::function<void(nlohmann::json& point, const nlohmann::json& all_values,
                     const common_options&)>
      finish_point;
  /// Optional: checks of the whole plan that need more than one point (files, device memory);
  /// `text` holds every parameter's text as given (or its default).
  std::function<void(const std::vector<nlohmann::json>&, const nlohmann::json& all_values,
                     const param_values& text, const common_options&)>
      check_plan;
  /// Generated from the table by complete_declaration(): validates the values (usage_error naming
  /// the option) and expands every combination of the list-valued ones into points.
  std::function<std::vector<nlohmann::json>(const param_values&, const common_options&)> plan;
  /// Runs one point, read through its typed view: allocates, verifies, measures. Throws cuda
  /// errors; the runner records them. The runner adds the key "device" to every point (the GPU to
  /// use, -1 with --cpu-only; point_view::device()) and moves it from the result's params to
  /// result::device afterwards.
  std::function<result(const point_view& point, run_context&)> run_point;
  /// Optional: the device memory one GPU point needs, for --dry-run (L2 flush buffer excluded).
  std::function<std::size_t(const point_view& point)> device_bytes;

  point_plumbing after_point;

  /// Optional extra table after the per-result blocks (e.g. one row per batch size).
  std::function<void(std::ostream&, const std::vector<const result*>&)> summary_table;
};

/// Completes a declaration: sets b.plan from b.params, b.finish_point and b.check_plan, and
/// wraps b.run_point so that every point it runs gets the runner's plumbing (b.after_point).
/// Call once the rest is filled in.
void complete_declaration(benchmark& b);

/// The GPU a point runs on (-1: CPU only).
int point_device(const nlohmann::json& point);

/// The benchmark of `catalog` named `name`, or null.
const benchmark* find_benchmark(std::span<const benchmark> catalog, std::string_view name) noexcept;
/// The summary_table of every benchmark of `catalog` that has one, by name, for the report
/// writers (report.hpp).
summary_writers summary_tables(std::span<const benchmark> catalog);

/// Fills in the default of every parameter the user left unset; rejects unknown names (with a
/// "did you mean" when one is close).
param_values with_defaults(const benchmark& b, const param_values& given);

/// Looks up a value that with_defaults() guaranteed to exist.
const std::string& value_of(const param_values& v, std::string_view name);

/// The spec named `name` (std::logic_error when the table has none: a programming error).
const param_spec& spec_of(const std::vector<param_spec>& table, std::string_view name);

/// Parameters that the array benchmarks (vecadd, stream) declare alike, each default written once.
/// `n`: elements per array, a sweepable size from 1 to 2^36.
param_spec elements_param(std::string help, std::string default_value);
/// `dtype`: the element type, one of `types` (a list sweeps); default f32.
param_spec dtype_param(std::vector<std::string> types);
/// `block`: threads per block, 32 to 1024 in steps of 32; default 256 (GPU only).
param_spec block_param();
/// `grid`: "vectors" (the default: one 16-byte vector per thread), "device" or a block count
/// from 1 to `max_blocks` (GPU only). `choices` in the order --help lists them.
param_spec grid_param(std::string help, double max_blocks, std::vector<std::string> choices);

/// The typed values of one parameter's text: one for a single value, several for a sweep.
/// Throws usage_error naming the option.
std::vector<nlohmann::json> parse_param(const param_spec& spec, std::string_view text);

/// "SIZE", "{f32|f64}", "NUM"...: the type --help shows.
std::string param_type_name(const param_spec& spec);
/// "1 to 1024, multiple of 32", "0 to 180", "": the range --help shows.
std::string param_range_text(const param_spec& spec);

/// The closest of `candidates` to `word` when it is near enough to be a typo, else nothing.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);
/// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

} // namespace gpubench
