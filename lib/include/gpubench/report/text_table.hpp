#pragma once
// The cell-level writers every table of gpubench goes through (run reports, compare, plans): a
// terminal table that fits the output's width (output_width()), markdown, and CSV safe to open in
// a spreadsheet. Callers pass rows and columns; nothing here knows a benchmark.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

struct text_table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  /// Per column: a number, right-aligned, and written to CSV as it is (a leading '-' is a sign).
  std::vector<bool> right;
  /// The column that wraps (at spaces, over several lines) so the table fits `width`; -1: none.
  int wrap_column = -1;
  /// The columns the table fits; 0: output_width() when it is written.
  std::size_t width = 0;
  /// Optional, one per row: a group heading (a point's benchmark and parameters) written on lines
  /// of its own, wrapped to `width`, before the first row of each run of equal headings; the
  /// header and rows are then indented two spaces under it.
  std::vector<std::string> sections;
};

/// True when the table has rows and column `c` says the same on every one.
bool constant_column(const text_table& t, std::size_t c);
/// Removes column `c` (header, alignment, every row), e.g. a constant one said once elsewhere.
void erase_column(text_table& t, std::size_t c);

/// The width terminal output keeps to: the terminal's columns as the program found them at its
/// start (set_output_width), 120 when it did not set one. Tables fold to it, notes and headings
/// wrap to it, the progress line is cut to it.
std::size_t output_width();
/// Sets output_width() (at least 40 columns: narrower is taken as 40).
void set_output_width(std::size_t columns);
/// output_width() set to `columns` for the scope's life, then restored: text that no terminal
/// shows (an HTML page's copy of the table) keeps to 120 columns whatever the terminal is.
class output_width_scope {
public:
  explicit output_width_scope(std::size_t columns) : saved_(output_width()) {
    set_output_width(columns);
  }
  ~output_width_scope() { set_output_width(saved_); }
  output_width_scope(const output_width_scope&) = delete;
  output_width_scope& operator=(const output_width_scope&) = delete;
  output_width_scope(output_width_scope&&) = delete;
  output_width_scope& operator=(output_width_scope&&) = delete;

private:
  std::size_t saved_;
};

/// Columns padded to their widest cell, two spaces apart, no trailing blanks; the wrap column
/// gets what the others leave of the width (at least 18 characters) and wraps within it. A table
/// still wider than its width folds: the first column, then as many of the next as fit, and below
/// it the first column again with the columns that did not fit, and so on.
void write_text_table(std::ostream& os, const text_table& t);
/// `text` wrapped at spaces to `width` columns: the first line after `indent`, the others after
/// `continuation` (a word longer than the room left is cut).
void write_wrapped(std::ostream& os, std::string_view text, std::size_t width,
                   std::string_view indent = "", std::string_view continuation = "  ");
/// `text` cut to `width` columns, ending in "..." where it was cut (a one-line status).
std::string elided(std::string_view text, std::size_t width);
/// A GitHub markdown table; '|' inside cells is escaped.
void write_markdown_table(std::ostream& os, const text_table& t);
/// RFC 4180 CSV: text cells through csv_text(), number columns through csv_plain().
void write_csv_table(std::ostream& os, const text_table& t);

/// A CSV field from untrusted text: quoted when it holds a comma, quote or line break, and a
/// leading '=', '+', '-', '@', tab or carriage return is prefixed with a single quote, so that a
/// spreadsheet does not run it as a formula (CSV injection; docs/errors.md, "Output").
std::string csv_text(std::string_view s);
/// A CSV field for text gpubench formats itself (numbers): quoted when needed, never altered.
std::string csv_plain(std::string_view s);
/// Markdown cell text: '|' escaped, line breaks as spaces.
std::string markdown_text(std::string_view s);

/// A parameter value as people write it: strings as they are, integers as integers, and floating
/// point numbers in the shortest text that reads back to the same value, as a float when the
/// value is exactly a float (123.7, not 123.69999694824219).
std::string param_text(const nlohmann::json& v);
/// "key=value key=value" with param_text values.
std::string params_text(const nlohmann::json& params);

/// Splits `s` at spaces into lines of at most `width` characters (a longer word is cut).
std::vector<std::string> wrap_words(std::string_view s, std::size_t width);

} // namespace gpubench
