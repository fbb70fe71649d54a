#pragma once
// The typed view of one planned point that every driver reads: the planner has parsed and
// range-checked each value (benchmark.hpp), so a driver asks for `n` as an integer, `dtype` as an
// enum and `grid` as a word or a count, and never compares or parses text itself. A key the
// table lacks, or a read as the wrong type, is a programming error (std::logic_error naming the
// key), not a user's mistake.
#include "gpubench/core/word_choice.hpp"
#include "gpubench/dtype.hpp"
#include "gpubench/engine/benchmark.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gpubench {

/// The element types by their names, for a `dtype` parameter (dtype_param()).
inline constexpr std::array<word_choice<dtype>, 4> dtype_words{
    {{"f32", dtype::f32}, {"f64", dtype::f64}, {"f16", dtype::f16}, {"bf16", dtype::bf16}}};

/// A word_or_size parameter's value: one of its words, or a count.
using word_or_count = std::variant<std::string, std::int64_t>;

class point_view {
public:
  /// Views `values` (a planned point) through `table`, its benchmark's parameters. Both must
  /// outlive the view.
  point_view(const std::vector<param_spec>& table, const nlohmann::json& values) noexcept
      : table_(&table), values_(&values) {}

  /// The point as planned and recorded in the result's params.
  [[nodiscard]] const nlohmann::json& values() const noexcept { return *values_; }
  /// The GPU the point runs on, -1 with --cpu-only.
  [[nodiscard]] int device() const noexcept;
  /// Whether the point holds `name` (false for a GPU-only parameter of a --cpu-only run, one
  /// outside its `only_when` condition, or an optional one left unset).
  [[nodiscard]] bool has(std::string_view name) const;

  /// A size or number parameter as T, the table's default where the point lacks it. An integer
  /// type requires an integral value that fits T.
  template <class T>
  requires std::is_arithmetic_v<T>
  [[nodiscard]] T get(std::string_view name) const {
    const nlohmann::json v = number_value(name);
    if constexpr (std::is_floating_point_v<T>) {
      return v.get<T>();
    } else {
      if (v.is_number_unsigned()) {
        const auto x = v.get<std::uint64_t>();
        if (std::in_range<T>(x)) return static_cast<T>(x);
      } else if (v.is_number_integer()) {
        const auto x = v.get<std::int64_t>();
        if (std::in_range<T>(x)) return static_cast<T>(x);
      }
      throw_wrong_type(name, "an integer of this range");
    }
  }

  /// A word, text or path parameter ("" for an optional one left unset).
  [[nodiscard]] std::string text(std::string_view name) const;
  /// A word parameter as the value its word has in `choices`.
  template <class E>
  [[nodiscard]] E word(std::string_view name, std::span<const word_choice<E>> choices) const {
    const std::string w = word_text(name);
    for (const auto& c : choices)
      if (c.name == w) return c.value;
    throw_wrong_type(name, "one of the words its driver knows");
  }
  /// A words parameter (a set of choices) as the values of its words, in the table's order.
  template <class E>
  [[nodiscard]] std::vector<E> words(std::string_view name,
                                     std::span<const word_choice<E>> choices) const {
    std::vector<E> out;
    for (const auto& w : word_list(name)) {
      bool known = false;
      for (const auto& c : choices)
        if (c.name == w) {
          out.push_back(c.value);
          known = true;
        }
      if (!known) throw_wrong_type(name, "words its driver knows");
    }
    return out;
  }
  /// A numbers parameter (one number or a list) as its numbers.
  [[nodiscard]] std::vector<double> numbers(std::string_view name) const;
  /// A word_or_size parameter: its word, or its count.
  [[nodiscard]] word_or_count word_or_size(std::string_view name) const;

private:
  const param_spec& spec(std::string_view name) const;
  /// The point's value of `name`, else the table's default; std::logic_error when neither.
  nlohmann::json value(std::string_view name) const;
  nlohmann::json number_value(std::string_view name) const;
  std::string word_text(std::string_view name) const;
  std::vector<std::string> word_list(std::string_view name) const;
  [[noreturn]] void throw_wrong_type(std::string_view name, std::string_view wanted) const;

  const std::vector<param_spec>* table_;
  const nlohmann::json* values_;
};

} // namespace gpubench
