// Copyright 2026 The Sieve Authors.

#ifndef SIEVE_TESTS_TESTUTIL_INL_H_
#define SIEVE_TESTS_TESTUTIL_INL_H_

#include <algorithm>

namespace sieve::test {

template <typename Pass>
std::vector<std::pair<uint32_t, double>> OracleTopK(Metric metric, const float* query,
                                                    const float* rows, size_t n_rows,
                                                    size_t dim, size_t k, Pass&& pass) {
  std::vector<std::pair<uint32_t, double>> all;
  for (size_t r = 0; r < n_rows; ++r) {
    if (!pass(static_cast<uint32_t>(r))) continue;
    all.emplace_back(static_cast<uint32_t>(r), OracleDistance(metric, query, rows + r * dim, dim));
  }
  const bool larger_better = metric == Metric::kInnerProduct;
  auto better = [&](const auto& a, const auto& b) {
    if (a.second != b.second) return larger_better ? a.second > b.second : a.second < b.second;
    return a.first < b.first;
  };
  size_t keep = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + keep, all.end(), better);
  all.resize(keep);
  return all;
}

}  // namespace sieve::test

#endif  // SIEVE_TESTS_TESTUTIL_INL_H_
