// Copyright 2026 The Sieve Authors.
//
// Order statistics of timings and penalties.

#ifndef SIEVE_QUERY_CALIBRATE_STATS_H_
#define SIEVE_QUERY_CALIBRATE_STATS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace sieve::calibrate {

inline double Median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median in log space (an even count takes the geometric mean of the middle two).
inline double LogMedian(std::vector<double> v) {
  for (double& x : v) x = std::log(std::max(x, 1e-12));
  return std::exp(Median(std::move(v)));
}

inline double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_STATS_H_
