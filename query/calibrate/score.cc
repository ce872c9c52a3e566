// Copyright 2026 The Sieve Authors.

#include "query/calibrate/score.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "query/calibrate/stats.h"

namespace sieve::calibrate {

Penalty Score(const std::vector<Cell>& cells, bool per_query, uint32_t queries, uint32_t k,
              const Rule& rule) {
  Penalty p;
  std::vector<double> ratios;
  for (const Cell& c : cells) {
    if (c.per_query != per_query) continue;
    const int chosen = PathIndex(rule(c.plan_input(queries, k)));
    if (c.failed[chosen]) continue;
    const double ratio = c.ms[chosen] / c.best_ms();
    if (c.pruned[chosen]) ++p.lower_bounds;
    ratios.push_back(std::max(1.0, ratio));
  }
  p.points = ratios.size();
  if (ratios.empty()) return p;
  double sum = 0;
  for (double r : ratios) sum += r;
  p.mean = sum / ratios.size();
  p.p90 = Quantile(ratios, 0.9);
  p.worst = *std::max_element(ratios.begin(), ratios.end());
  return p;
}

}  // namespace sieve::calibrate
