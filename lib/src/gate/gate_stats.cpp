// Hodges-Lehmann shift, its Mann-Whitney confidence interval and the interval's verdict.
#include "gpubench/gate/gate_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace gpubench {
namespace {

constexpr std::size_t exact_limit = 60;  // values a side up to which U's law is counted exactly
constexpr std::size_t thin_limit = 2000; // values a side kept for the pairwise differences

/// Number of arrangements of m a's and n b's for each U = 0 .. m n, by the recurrence
/// f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u), over one row at a time. Doubles: with 60 a
/// side the counts reach ~1e35, far inside their range, and only ratios are used.
std::vector<double> u_counts(std::size_t m, std::size_t n) {
  // f[j][u] for the current i (a's), j = 0 .. n (b's).
  std::vector<std::vector<double>> f(n + 1);
  for (std::size_t j = 0; j <= n; ++j) f[j] = {1.0}; // i = 0: one arrangement, U = 0
  for (std::size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> g(n + 1);
    g[0] = {1.0}; // j = 0: U = 0
    for (std::size_t j = 1; j <= n; ++j) {
      // The last value is an a (it beats all j b's: U from f(i - 1, j) shifted by j) or a b.
      std::vector<double> row(i * j + 1, 0.0);
      for (std::size_t u = 0; u < f[j].size(); ++u) row[u + j] += f[j][u];
      for (std::size_t u = 0; u < g[j - 1].size(); ++u) row[u] += g[j - 1][u];
      g[j] = std::move(row);
    }
    f = std::move(g);
  }
  return f[n];
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

/// Inverse of the standard normal CDF by bisection (only called a few times per comparison).
double normal_quantile(double p) {
  double lo = -40;
  double hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::vector<double> thinned(std::span<const double> v) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  if (s.size() <= thin_limit) return s;
  std::vector<double> out(thin_limit);
  for (std::size_t i = 0; i < thin_limit; ++i) {
    const double q = (static_cast<double>(i) + 0.5) / static_cast<double>(thin_limit);
    out[i] = s[static_cast<std::size_t>(q * static_cast<double>(s.size()))];
  }
  return out;
}

double order_statistic(std::vector<double>& d, std::size_t k) { // k 0-based
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end());
  return d[k];
}

} // namespace

double mann_whitney_cdf(std::size_t m, std::size_t n, double u) {
  if (m == 0 || n == 0) return u >= 0 ? 1.0 : 0.0;
  if (u < 0) return 0;
  const auto mn = static_cast<double>(m * n);
  if (u >= mn) return 1;
  if (m <= exact_limit && n <= exact_limit) {
    const auto counts = u_counts(m, n);
    double total = 0;
    double below = 0;
    const auto top = static_cast<std::size_t>(std::floor(u));
    for (std::size_t k = 0; k < counts.size(); ++k) {
      total += counts[k];
      if (k <= top) below += counts[k];
    }
    return below / total;
  }
  const auto dm = static_cast<double>(m);
  const auto dn = static_cast<double>(n);
  const double sd = std::sqrt(dm * dn * (dm + dn + 1) / 12.0);
  return normal_cdf((std::floor(u) + 0.5 - mn / 2) / sd);
}

interval_rank shift_interval_rank(std::size_t m, std::size_t n, double confidence) {
  interval_rank r;
  if (m == 0 || n == 0) return r;
  const double tail = (1 - confidence) / 2;
  if (m <= exact_limit && n <= exact_limit) {
    const auto counts = u_counts(m, n);
    double total = 0;
    for (const double c : counts) total += c;
    // Largest C with P(U <= C - 1) <= tail: walk the lower tail.
    double below = 0; // P(U <= C - 1)
    std::size_t c = 0;
    while (c < counts.size() && (below + counts[c]) / total <= tail * (1 + 1e-12)) {
      below += counts[c];
      ++c;
    }
    r.cut = c;
    r.coverage = 1 - 2 * below / total;
    return r;
  }
  const auto dm = static_cast<double>(m);
  const auto dn = static_cast<double>(n);
  const double z = normal_quantile(1 - tail);
  const double c = std::floor(dm * dn / 2 - z * std::sqrt(dm * dn * (dm + dn + 1) / 12.0));
  r.cut = c > 0 ? static_cast<std::size_t>(c) : 0;
  r.coverage = 1 - 2 * mann_whitney_cdf(m, n, static_cast<double>(r.cut) - 1);
  return r;
}

shift_estimate hodges_lehmann(std::span<const double> a, std::span<const double> b,
                              double confidence) {
  shift_estimate e;
  if (a.empty() || b.empty()) {
    e.lo = -std::numeric_limits<double>::infinity();
    e.hi = std::numeric_limits<double>::infinity();
    return e;
  }
  const auto ta = thinned(a);
  const auto tb = thinned(b);
  std::vector<double> d;
  d.reserve(ta.size() * tb.size());
  for (const double y : tb)
    for (const double x : ta) d.push_back(y - x);
  const std::size_t n = d.size();
  e.estimate = n % 2 == 1 ? order_statistic(d, n / 2)
                          : 0.5 * (order_statistic(d, n / 2 - 1) + order_statistic(d, n / 2));
  const auto rank = shift_interval_rank(ta.size(), tb.size(), confidence);
  if (rank.cut == 0) {
    e.lo = -std::numeric_limits<double>::infinity();
    e.hi = std::numeric_limits<double>::infinity();
    e.coverage = 1;
    return e;
  }
  // 1-based order statistics C and mn + 1 - C.
  e.lo = order_statistic(d, rank.cut - 1);
  e.hi = order_statistic(d, n - rank.cut);
  e.coverage = rank.coverage;
  e.bounded = true;
  return e;
}

verdict judge_interval(double lo, double hi, bool bounded, const gate_limits& limits) {
  if (!bounded) return verdict::inconclusive;
  // A change of exactly the limit is not beyond it (up to rounding in the ratio).
  const double beyond = (limits.threshold + limits.allowance) * (1 + 1e-9) + 1e-12;
  if (lo > beyond) return verdict::slower;
  if (hi < -beyond) return verdict::faster;
  // Equivalence is held to the same allowance as a change: with between-run noise unknown, the
  // margin shrinks by it, and an allowance at or past the margin means "same" cannot be shown.
  const double narrowed = limits.same_margin - limits.allowance;
  if (narrowed <= 0) return verdict::inconclusive;
  const double margin = narrowed * (1 + 1e-9) + 1e-12;
  if (lo >= -margin && hi <= margin) return verdict::same;
  return verdict::inconclusive;
}

rank_test mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  rank_test t;
  const std::size_t n1 = a.size();
  const std::size_t n2 = b.size();
  if (n1 == 0 || n2 == 0) return t;
  const std::size_t n = n1 + n2;
  // (value, from a) sorted by value; tied values share the mean of their ranks.
  std::vector<std::pair<double, bool>> all;
  all.reserve(n);
  for (const double v : a) all.emplace_back(v, true);
  for (const double v : b) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0;
  double tie_term = 0; // sum of t^3 - t over groups of t tied values
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j); // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (all[k].second) rank_sum_a += mean_rank;
    }
    const auto t_count = static_cast<double>(j - i);
    tie_term += t_count * t_count * t_count - t_count;
    i = j;
  }
  const auto dn1 = static_cast<double>(n1);
  const auto dn2 = static_cast<double>(n2);
  const auto dn = static_cast<double>(n);
  t.u = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double mean_u = dn1 * dn2 / 2;
  const double var_u = dn1 * dn2 / 12.0 * ((dn + 1) - (n > 1 ? tie_term / (dn * (dn - 1)) : 0.0));
  if (var_u <= 0) return t; // every value tied: no evidence of a difference
  const double d = t.u - mean_u;
  const double corrected = std::max(std::abs(d) - 0.5, 0.0);
  t.z = std::copysign(corrected, d) / std::sqrt(var_u);
  t.p_value = std::min(1.0, std::erfc(std::abs(t.z) / std::sqrt(2.0)));
  return t;
}

} // namespace gpubench
