// Copyright 2026 The Sieve Authors.
//
// One point of a path sweep: a shard shape, a filter mode and a passing-row count, with the
// time of every path there. What the sweep measures, the fit reads and the scores judge.

#ifndef SIEVE_QUERY_CALIBRATE_CELL_H_
#define SIEVE_QUERY_CALIBRATE_CELL_H_

#include <cstdint>
#include <string>

#include "query/planner.h"
#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::calibrate {

// How the per-query filters of a bitmap point overlap: every query the same set, each its own
// independent random set, or half shared and half its own.
enum class Overlap : uint8_t { kShared = 0, kIndependent = 1, kHalf = 2 };
const char* OverlapName(Overlap o);
Status ParseOverlap(const std::string& text, Overlap* out);

// One point: a shape, a filter mode and a passing-row count, with every path's time.
struct Cell {
  uint64_t rows = 0;
  uint32_t dim = 0;
  bool per_query = false;
  Overlap overlap = Overlap::kShared;  // bitmap only
  uint64_t passing = 0;                // bitset: the set's count; bitmap: the mean per-query count
  uint64_t union_rows = 0;             // bitmap: |union of the queries' sets|; bitset: = passing
  uint64_t max_passing = 0;            // bitmap: the largest per-query count; bitset: = passing
  double ms[3] = {0, 0, 0};            // sddmm, gather, dense (median); a lower bound when pruned
  bool pruned[3] = {false, false, false};
  bool failed[3] = {false, false, false};
  int reps[3] = {0, 0, 0};
  bool results_agree = true;  // every path returned the same counts and best distances

  double fraction() const { return rows ? static_cast<double>(passing) / rows : 0; }
  double union_fraction() const { return rows ? static_cast<double>(union_rows) / rows : 0; }
  // The fastest path that ran (0 sddmm, 1 gather, 2 dense), and its time.
  int best() const;
  double best_ms() const { return ms[best()]; }
  PlanInput plan_input(uint32_t queries, uint32_t k) const;
};

int PathIndex(SearchPath p);  // kSddmm 0, kGather 1, kDense 2
SearchPath PathAt(int i);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_CELL_H_
