#pragma once
// Sizes as people write them: 10000000, 10M (10^6), 1Mi (2^20), 2^28; lists 1M,10M; ranges
// 1M:1G:x4 (geometric) and 0:1000:100 (arithmetic), both inclusive of the end when it is hit.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// Most values a single list or range may expand to.
inline constexpr std::size_t max_list_values = 4096;

/// Parses one size. Throws usage_error naming `option` and the text on any problem.
std::uint64_t parse_size(std::string_view text, std::string_view option = "size");

/// Parses a list of sizes and ranges. Never returns an empty list.
std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view option = "size");

/// Parses one finite number: decimal digits with an optional sign, fraction and exponent, the
/// same rules for every option and every run-file value that becomes one (docs/errors.md). Refuses
/// hexadecimal, inf/nan, trailing text, and values that overflow or underflow to 0 as a double
/// (subnormals such as 1e-320 are kept). Throws usage_error naming `option`.
double parse_number(std::string_view text, std::string_view option);

/// `value` as the float32 it is used as; refuses values beyond float32's range and nonzero values
/// that would round to 0 (--sigma 1e-50). Throws usage_error naming `option`.
float to_float32(double value, std::string_view option);

/// Parses a comma-separated list of finite numbers (no ranges), each by parse_number.
std::vector<double> parse_number_list(std::string_view text, std::string_view option);

/// Parses a comma-separated list of words, each one of `allowed`; "all" (and "both" when two are
/// allowed) expands to `all` (default: `allowed`). Duplicates are dropped, order kept. Throws
/// usage_error naming the option and the accepted words.
std::vector<std::string> parse_word_list(std::string_view text, std::string_view option,
                                         const std::vector<std::string>& allowed,
                                         const std::vector<std::string>& all = {});

/// A percentage as every option, run file and variable gives one: a number by parse_number's
/// rules, with or without a trailing '%' ("2.5", "2.5%"; `sign_required`: only "2.5%"). Returns
/// the number of percent, or nullopt when `text` is not one: the caller says what it expected.
std::optional<double> read_percent(std::string_view text, bool sign_required = false);

/// A device list as --device and a run file's "device" give it: "all", or device indices from 0
/// to 1023 separated by commas. Returns the indices, or nullopt for "all". Throws usage_error
/// naming `option` and the item that is not an index.
std::optional<std::vector<int>> parse_device_list(std::string_view text, std::string_view option);

/// Formats a size compactly: 10000000 -> "10M", 268435456 -> "2^28", 1536 -> "1536".
std::string format_size(std::uint64_t n);

} // namespace gpubench
