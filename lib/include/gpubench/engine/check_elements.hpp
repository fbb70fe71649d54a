#pragma once
// Element-by-element verification on the thread pool (every element of a GPU output is checked
// against its CPU reference): the one loop behind each benchmark's check.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/results/result.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

namespace gpubench {

/// One element's check: its absolute error (infinity for a NaN) and whether it passes; a
/// non-finite element is also counted apart (augment reports them).
struct element_outcome {
  double error = 0;
  bool ok = true;
  bool non_finite = false;
};

/// What the caller describes in v.details: the first failing index and the non-finite count.
struct element_check {
  std::optional<std::size_t> first_bad;
  std::uint64_t non_finite = 0;
};

/// Elements a block of check_elements covers where a caller says whole blocks are the same.
inline constexpr std::size_t check_elements_block = 4096;

/// Checks elements [0, n) in parallel, `check(i)` giving each element's outcome, and fills `v`:
/// performed, checked = n, mismatches, max_abs_error (over every element) and passed (no
/// mismatch; a caller with a looser rule sets it again). `same(begin, end)` may say a block of
/// elements is bit for bit the reference, where `check` would give each of them an error of 0,
/// passing and finite: such a block is not looked at element by element. An exact check compares
/// whole blocks at the speed of memory and looks closer only where one differs.
template <class Check, class Same>
element_check check_elements(std::size_t n, thread_pool& pool, verification& v, const Check& check,
                             const Same& same) {
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::mutex m;
  std::size_t first_bad = none;
  std::uint64_t non_finite = 0;
  v.performed = true;
  v.checked = n;
  v.mismatches = 0;
  pool.parallel_for(n, [&](std::size_t begin, std::size_t end) {
    double max_err = 0;
    std::uint64_t bad = 0;
    std::uint64_t bad_values = 0;
    std::size_t first = none;
    for (std::size_t b = begin; b < end; b += check_elements_block) {
      const std::size_t e = std::min(end, b + check_elements_block);
      if (same(b, e)) continue;
      for (std::size_t i = b; i < e; ++i) {
        const element_outcome o = check(i);
        max_err = std::max(max_err, o.error);
        if (o.non_finite) ++bad_values;
        if (!o.ok) {
          ++bad;
          first = std::min(first, i);
        }
      }
    }
    const std::lock_guard lock(m);
    v.max_abs_error = std::max(v.max_abs_error, max_err);
    v.mismatches += bad;
    non_finite += bad_values;
    first_bad = std::min(first_bad, first);
  });
  v.passed = v.mismatches == 0;
  element_check out;
  out.non_finite = non_finite;
  if (first_bad != none) out.first_bad = first_bad;
  return out;
}

/// A `same` for check_elements: the block's bytes in `expected` and in `got` are equal, for
/// elements of `element_size` bytes.
inline auto same_bytes(const void* expected, const void* got, std::size_t element_size) {
  return [e = static_cast<const std::byte*>(expected), g = static_cast<const std::byte*>(got),
          element_size](std::size_t begin, std::size_t end) {
    return std::memcmp(e + begin * element_size, g + begin * element_size,
                       (end - begin) * element_size) == 0;
  };
}

/// As above, every element looked at.
template <class Check>
element_check check_elements(std::size_t n, thread_pool& pool, verification& v,
                             const Check& check) {
  return check_elements(n, pool, v, check, [](std::size_t, std::size_t) { return false; });
}

} // namespace gpubench
