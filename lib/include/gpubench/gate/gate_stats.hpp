#pragma once
// The statistics of the regression gate (docs/compare.md): a Hodges-Lehmann shift with its
// distribution-free confidence interval, and the verdict that interval gives against a threshold.
// Kept apart from compare.cpp's matching and output so each can change alone. Also the plain
// Mann-Whitney U test, kept for reference.
#include <cstddef>
#include <span>
#include <string>

namespace gpubench {

/// Probability that the Mann-Whitney U of samples of sizes m and n is at most u when both come
/// from one continuous distribution: exact (counting arrangements) up to 60 values a side, the
/// normal approximation with continuity correction beyond.
double mann_whitney_cdf(std::size_t m, std::size_t n, double u);

/// The distribution-free interval for a shift: the number C of pairwise differences cut from each
/// end, the largest with P(U <= C - 1) <= (1 - confidence) / 2, and the coverage that C gives
/// (1 - 2 P(U <= C - 1), at least `confidence`). C = 0 means no interval at that confidence
/// exists for these sizes (e.g. 2 values a side at 90%).
struct interval_rank {
  std::size_t cut = 0;
  double coverage = 1;
};
interval_rank shift_interval_rank(std::size_t m, std::size_t n, double confidence);

/// Hodges-Lehmann estimate of the shift of `b` against `a` (the median of all b_j - a_i) and its
/// confidence interval [lo, hi] from the order statistics of those differences. `bounded` is
/// false when the sizes allow no interval at this confidence (then lo = -inf, hi = +inf).
/// Sides with more than 2000 values are thinned to 2000 evenly spaced order statistics first, so
/// the cost stays a few million differences.
struct shift_estimate {
  double estimate = 0;
  double lo = 0;
  double hi = 0;
  double coverage = 0;
  bool bounded = false;
};
shift_estimate hodges_lehmann(std::span<const double> a, std::span<const double> b,
                              double confidence);

enum class verdict { faster, slower, same, inconclusive };

/// How an interval of relative change (new / base - 1, lower is better) is judged:
///   slower: the whole interval above +(threshold + allowance)
///   faster: the whole interval below -(threshold + allowance)
///   same:   the whole interval within +-(same_margin - allowance) (an equivalence test: the two
///           one-sided tests at the interval's level); never when allowance >= same_margin
///   inconclusive: anything else.
/// `allowance` is the between-run noise assumed when it is unknown (one run on a side): it widens
/// the limits of a change and narrows the margin of equivalence by the same amount.
struct gate_limits {
  double threshold = 0.05;
  double same_margin = 0.025;
  double allowance = 0;
};
verdict judge_interval(double lo, double hi, bool bounded, const gate_limits& limits);

/// Two-sided Mann-Whitney U test of "a and b come from the same distribution", by the normal
/// approximation with tie correction and continuity correction (kept for reference; the gate
/// judges intervals, gate_stats.hpp).
struct rank_test {
  double u = 0;       ///< U statistic of `a` (number of pairs with a > b, ties counting 1/2)
  double z = 0;       ///< standardized U, positive when `a` tends to be larger
  double p_value = 1; ///< two-sided; 1 when either side is empty or all values are tied
};
rank_test mann_whitney_u(std::span<const double> a, std::span<const double> b);

} // namespace gpubench
