#pragma once
// Report writers: a table for people, JSON for scripts, CSV and markdown for spreadsheets and PRs.
#include "gpubench/results/result.hpp"

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

enum class output_format { table, json, csv, md };
std::optional<output_format> parse_output_format(std::string_view s) noexcept;

/// A benchmark's extra table after the result blocks (e.g. one row per batch size), by benchmark
/// name. The caller passes them in (benchmark.hpp's summary_tables()): writers know no registry.
using summary_writer = std::function<void(std::ostream&, const std::vector<const result*>&)>;
using summary_writers = std::map<std::string, summary_writer, std::less<>>;

void write_report(std::ostream& os, const run_report& r, output_format f,
                  const summary_writers& summaries = {});
void write_table(std::ostream& os, const run_report& r, const summary_writers& summaries = {});
/// The table's whole legend, for `--help`: each table's own legend names only what it shows.
extern const char* const table_legend_help;
void write_csv(std::ostream& os, const run_report& r);
void write_markdown(std::ostream& os, const run_report& r);

/// Human units: 28.4 us, 1.52 ms; 4.23 TB/s; 1.2 M images/s.
std::string format_seconds(double s);
/// One word for a summary table: "passed", "FAILED" or "not performed".
std::string verification_word(const verification& v);
std::string format_bytes_per_s(double bps);
std::string format_rate(double per_s, std::string_view unit);
std::string format_bytes(double bytes);

} // namespace gpubench
