#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ostream>

namespace gpubench {

bool constant_column(const text_table& t, std::size_t c) {
  return !t.rows.empty() && std::all_of(t.rows.begin(), t.rows.end(), [&](const auto& row) {
    return row[c] == t.rows.front()[c];
  });
}

void erase_column(text_table& t, std::size_t c) {
  const auto at = [c](auto& v) { v.erase(v.begin() + static_cast<std::ptrdiff_t>(c)); };
  at(t.header);
  if (c < t.right.size()) at(t.right);
  for (auto& row : t.rows) at(row);
}

std::vector<std::string> wrap_words(std::string_view s, std::size_t width) {
  width = std::max<std::size_t>(width, 1);
  std::vector<std::string> lines;
  std::string line;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const auto space = s.find(' ', pos);
    std::string_view word = s.substr(pos, space == std::string_view::npos ? s.npos : space - pos);
    pos = space == std::string_view::npos ? s.size() : space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    while (word.size() > width) { // a word wider than the column: cut it
      if (!line.empty()) {
        lines.push_back(std::move(line));
        line.clear();
      }
      lines.emplace_back(word.substr(0, width));
      word.remove_prefix(width);
    }
    if (!word.empty()) line += (line.empty() ? "" : " ") + std::string(word);
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

namespace {

std::atomic<std::size_t> the_output_width{120};

/// One table whose columns fit (or that has no room to fold further): cells padded, the wrap
/// column wrapped, grouped rows under their headings.
void write_fitted(std::ostream& os, const text_table& t, std::size_t table_width,
                  const std::vector<std::size_t>& natural) {
  const std::size_t n = t.header.size();
  std::vector<std::size_t> width = natural;
  const bool grouped = !t.sections.empty() && t.sections.size() == t.rows.size();
  const std::string indent = grouped ? "  " : "";
  if (t.wrap_column >= 0 && static_cast<std::size_t>(t.wrap_column) < n) {
    const auto w = static_cast<std::size_t>(t.wrap_column);
    std::size_t others = 2 * (n - 1) + indent.size();
    for (std::size_t i = 0; i < n; ++i)
      if (i != w) others += width[i];
    const std::size_t room = table_width > others ? table_width - others : 0;
    width[w] = std::min(width[w], std::max<std::size_t>(room, 18));
    width[w] = std::max(width[w], t.header[w].size());
  }
  const auto write_row = [&](const std::vector<std::string>& row) {
    std::vector<std::vector<std::string>> cells(n);
    std::size_t height = 1;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& text = i < row.size() ? row[i] : std::string();
      cells[i] = static_cast<int>(i) == t.wrap_column ? wrap_words(text, width[i])
                                                      : std::vector<std::string>{text};
      height = std::max(height, cells[i].size());
    }
    for (std::size_t l = 0; l < height; ++l) {
      std::string line = indent;
      for (std::size_t i = 0; i < n; ++i) {
        const std::string& c = l < cells[i].size() ? cells[i][l] : std::string();
        const bool right = i < t.right.size() && t.right[i];
        line += right ? fmt::format("{:>{}}", c, width[i]) : fmt::format("{:<{}}", c, width[i]);
        if (i + 1 < n) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      os << line << '\n';
    }
  };
  write_row(t.header);
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    if (grouped && (r == 0 || t.sections[r] != t.sections[r - 1]))
      // Continuation lines of a long heading are indented deeper than the rows below it.
      write_wrapped(os, t.sections[r], table_width, "", "    ");
    write_row(t.rows[r]);
  }
}

/// The table with only `keep` of its columns (in order).
text_table columns_of(const text_table& t, const std::vector<std::size_t>& keep) {
  text_table out;
  out.sections = t.sections;
  out.width = t.width;
  for (const auto c : keep) {
    out.header.push_back(t.header[c]);
    out.right.push_back(c < t.right.size() && t.right[c]);
    if (static_cast<int>(c) == t.wrap_column)
      out.wrap_column = static_cast<int>(out.header.size() - 1);
  }
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    cells.reserve(keep.size());
    for (const auto c : keep) cells.push_back(c < row.size() ? row[c] : std::string());
    out.rows.push_back(std::move(cells));
  }
  return out;
}

} // namespace

std::size_t output_width() { return the_output_width.load(); }

void set_output_width(std::size_t columns) {
  the_output_width.store(std::max<std::size_t>(columns, 40));
}

void write_wrapped(std::ostream& os, std::string_view text, std::size_t width,
                   std::string_view indent, std::string_view continuation) {
  const std::size_t first = width > indent.size() ? width - indent.size() : 1;
  const std::size_t rest = width > continuation.size() ? width - continuation.size() : 1;
  // Wrapped to the narrower room, so that no continuation line overflows.
  const auto lines = wrap_words(text, std::min(first, rest));
  for (std::size_t i = 0; i < lines.size(); ++i)
    os << (i == 0 ? indent : continuation) << lines[i] << '\n';
}

std::string elided(std::string_view text, std::size_t width) {
  if (text.size() <= width) return std::string(text);
  if (width <= 3) return std::string(text.substr(0, width));
  return std::string(text.substr(0, width - 3)) + "...";
}

void write_text_table(std::ostream& os, const text_table& t) {
  const std::size_t n = t.header.size();
  const std::size_t table_width = t.width != 0 ? t.width : output_width();
  std::vector<std::size_t> width(n, 0);
  const auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < n && i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  widen(t.header);
  for (const auto& row : t.rows) widen(row);
  const bool grouped = !t.sections.empty() && t.sections.size() == t.rows.size();
  // What the table takes: its columns two apart, a wrap column at its least (18 characters).
  const auto taken = [&](const std::vector<std::size_t>& cols) {
    std::size_t w = grouped ? 2 : 0;
    for (const auto c : cols)
      w += (static_cast<int>(c) == t.wrap_column ? std::min<std::size_t>(width[c], 18) : width[c]) +
           2;
    return w - 2;
  };
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  if (n < 3 || taken(all) <= table_width) {
    write_fitted(os, t, table_width, width);
    return;
  }
  // Fold: the first column keys every part; each part takes the next columns that fit (one at
  // least, however wide).
  std::size_t next = 1;
  bool first_part = true;
  while (next < n) {
    std::vector<std::size_t> keep{0};
    while (next < n) {
      keep.push_back(next);
      if (keep.size() > 2 && taken(keep) > table_width) {
        keep.pop_back();
        break;
      }
      ++next;
    }
    if (!first_part) os << '\n';
    first_part = false;
    const auto part = columns_of(t, keep);
    std::vector<std::size_t> part_width;
    part_width.reserve(keep.size());
    for (const auto c : keep) part_width.push_back(width[c]);
    write_fitted(os, part, table_width, part_width);
  }
}

std::string markdown_text(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

void write_markdown_table(std::ostream& os, const text_table& t) {
  const auto write_row = [&](const std::vector<std::string>& row) {
    os << '|';
    for (const auto& c : row) os << ' ' << markdown_text(c) << " |";
    os << '\n';
  };
  write_row(t.header);
  os << '|';
  for (std::size_t i = 0; i < t.header.size(); ++i)
    os << (i < t.right.size() && t.right[i] ? "---:|" : "---|");
  os << '\n';
  for (const auto& row : t.rows) write_row(row);
}

std::string csv_plain(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_text(std::string_view s) {
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos)
    return csv_plain("'" + std::string(s));
  return csv_plain(s);
}

void write_csv_table(std::ostream& os, const text_table& t) {
  const auto write_row = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool number = i < t.right.size() && t.right[i];
      os << (i == 0 ? "" : ",") << (number ? csv_plain(row[i]) : csv_text(row[i]));
    }
    os << '\n';
  };
  write_row(t.header);
  for (const auto& row : t.rows) write_row(row);
}

std::string param_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    const auto f = static_cast<float>(d);
    if (std::isfinite(d) && static_cast<double>(f) == d) return fmt::format("{}", f);
    return fmt::format("{}", d);
  }
  return v.dump();
}

std::string params_text(const nlohmann::json& params) {
  std::string out;
  for (const auto& [k, v] : params.items()) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}", k, param_text(v));
  }
  return out;
}

} // namespace gpubench
