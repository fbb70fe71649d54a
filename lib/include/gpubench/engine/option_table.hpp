#pragma once
// The measurement options, declared once as a typed table, as benchmarks declare their
// parameters: the CLI builds --warmup, --max-noise ... from it (name, type, range, default, help),
// run files read their "options" by it, every result records each option's effective value from it
// (meta.options), `rerun` applies that record again, and the docs' option table is checked against
// it. Adding a measurement option is one row here plus the code that uses the value.
#include "gpubench/engine/options.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// How an option's value is written and what its value in a run file or meta.options is.
enum class option_kind {
  integer, ///< a JSON integer within [min, max]
  seconds, ///< a number of seconds within [min, max] (min excluded when min_exclusive)
  percent, ///< a percentage (1 means 1%) within (min, max]; "1%" also read; stored as a fraction
  number,  ///< a plain number within [min, max] (min excluded when min_exclusive)
  flag,    ///< true or false; on the command line a flag without a value
  word,    ///< one of `choices`
  seed,    ///< an integer from 0 to 2^64-1
  devices, ///< a device index, a list of them or "all"; recorded as the list of indices
};

/// Which common_option_set member offers an option on a subcommand.
enum class option_group { device, measurement, inputs, cpu_threads, cpu_only };

/// What an option's value is written into: the common options and the raw --device text.
struct option_target {
  common_options& opts;
  std::string& device_spec;
};

struct option_spec {
  std::string name; ///< --name, the run-file key and the key in meta.options
  std::string help; ///< one line for --help; the range is added to it
  option_kind kind = option_kind::flag;
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  std::vector<std::string> choices{}; ///< word
  option_group group = option_group::measurement;
  /// Changes only how GPU samples are taken: noted as having no effect with --cpu-only.
  bool gpu_sampling = false;
  /// Whether it changes what a point measures (a resumed run must share these with its journal).
  bool changes_measurement = true;
  /// The effective value in `opts` as a run file writes it (percent as percent, devices as a list).
  std::function<nlohmann::json(const common_options&)> get;
  /// Sets the value `v`, already checked by read_option_value().
  std::function<void(option_target, const nlohmann::json& v)> set;
  /// Optional: whether `opts` sets the option at all (unset: its value differs from the default).
  std::function<bool(const common_options&)> is_set;
  /// Optional: "" when the option acts with the options `opts`, else the condition under which it
  /// has no effect ("without --energy"): the one place that decides what no_effect_notes() says.
  std::function<std::string(const common_options&)> no_effect;
};

/// Whether `opts` sets the option `spec`: is_set, else a value other than the default.
bool option_is_set(const option_spec& spec, const common_options& opts);

/// Throws usage_error "PATH: VALUE is TYPE; expected EXPECTED", the value shortened to one line.
[[noreturn]] void fail_value(std::string_view path, const nlohmann::json& value,
                             std::string_view expected);

/// Every measurement option, in the order --help lists them.
const std::vector<option_spec>& measurement_options();
/// The row named `name` (without dashes), or nullptr.
const option_spec* find_option(std::string_view name) noexcept;

/// The choice of a word option that `text` names, in any case ("WRITE" is write).
std::optional<std::string> match_choice(const option_spec& spec, std::string_view text);

/// Checks a run file's (or meta.options') value of `spec`; usage_error naming `path`, the value
/// and what was expected. Returns the value in its canonical JSON form (a device list as text).
nlohmann::json read_option_value(const option_spec& spec, const nlohmann::json& v,
                                 std::string_view path);

/// The effective value of every option in `opts`: the object results record as meta.options, in
/// the form a run file's "options" reads.
nlohmann::json options_record(const common_options& opts);

/// "INT", "SECONDS", "PCT", "NUM", "{read|write|none}": the type --help shows.
std::string option_type_name(const option_spec& spec);
/// "0 to 1000000", "above 0, at most 86400", "": the range --help shows.
std::string option_range_text(const option_spec& spec);
/// The default as --help and docs/usage.md show it ("1", "0.1", "off", "read").
std::string option_default_text(const option_spec& spec);

/// The notes for stderr on the options that are set (in `opts`, or `given` on the command line)
/// but have no effect with the others, one per condition: "--warm, --timestamps have no effect
/// with --cpu-only, which takes no GPU sample".
std::vector<std::string> no_effect_notes(const common_options& opts,
                                         const std::function<bool(const option_spec&)>& given);

/// The one form of those notes: "--a, --b have no effect CONDITION" (a benchmark's GPU-only
/// parameters under --cpu-only are noted in it too).
std::string no_effect_note(const std::vector<std::string>& names, std::string_view condition);

/// Throws usage_error naming the first option of `opts` outside its row's range, or a conflict
/// between options (--max-samples below --min-samples, --warm beside --l2-flush read).
void validate_options(const common_options& opts);

} // namespace gpubench
