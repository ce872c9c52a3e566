// Copyright 2026 The Sieve Authors.

#include "query/calibrate/cell.h"

#include <string>

namespace sieve::calibrate {

const char* OverlapName(Overlap o) {
  switch (o) {
    case Overlap::kShared:
      return "shared";
    case Overlap::kIndependent:
      return "independent";
    case Overlap::kHalf:
      return "half";
  }
  return "?";
}

Status ParseOverlap(const std::string& text, Overlap* out) {
  if (text == "shared")
    *out = Overlap::kShared;
  else if (text == "independent")
    *out = Overlap::kIndependent;
  else if (text == "half")
    *out = Overlap::kHalf;
  else
    return Status::InvalidArgument("overlap '" + text + "': expected shared, independent or half");
  return Status::OK();
}

int PathIndex(SearchPath p) {
  return p == SearchPath::kSddmm ? 0 : p == SearchPath::kGather ? 1 : 2;
}

SearchPath PathAt(int i) {
  return i == 0 ? SearchPath::kSddmm : i == 1 ? SearchPath::kGather : SearchPath::kDense;
}

int Cell::best() const {
  int b = -1;
  for (int p = 0; p < 3; ++p) {
    if (pruned[p] || failed[p] || reps[p] == 0) continue;
    if (b < 0 || ms[p] < ms[b]) b = p;
  }
  return b < 0 ? 2 : b;
}

PlanInput Cell::plan_input(uint32_t queries, uint32_t k) const {
  PlanInput in;
  in.rows = rows;
  in.dim = dim;
  in.num_queries = queries;
  in.k = k;
  in.per_query = per_query;
  in.passing_rows = passing;
  in.union_rows = union_rows;
  in.max_passing_rows = max_passing;
  return in;
}

}  // namespace sieve::calibrate
