// Copyright 2026 The Sieve Authors.
//
// How well a planner rule chooses paths over a sweep: each point's chosen path's time against
// its fastest path's.

#ifndef SIEVE_QUERY_CALIBRATE_SCORE_H_
#define SIEVE_QUERY_CALIBRATE_SCORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "query/planner.h"
#include "sieve/db.h"
#include "query/calibrate/cell.h"

namespace sieve::calibrate {

// Penalty of a rule over cells: chosen path's time / fastest path's time.
struct Penalty {
  size_t points = 0;
  double mean = 0, p90 = 0, worst = 0;
  size_t lower_bounds = 0;  // points where the chosen path was pruned (penalty is a lower bound)
};
using Rule = std::function<SearchPath(const PlanInput&)>;
Penalty Score(const std::vector<Cell>& cells, bool per_query, uint32_t queries, uint32_t k,
              const Rule& rule);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_SCORE_H_
