// Copyright 2026 The Sieve Authors.
//
// The plan of a grouped search (SearchRequest::group_by): how its groups are found over the
// executors' exact top-k searches, chosen from the counts (docs/planner.md#group-by).
//
//   few_groups   one filtered top-group_size search per (query, group), each over the query's
//                filter ∩ the value's postings (exact counts, known before anything runs);
//                the k groups whose best row is nearest are kept. Cost: every passing row
//                scored once per group it belongs to, in one batch; grows with the groups.
//   many_groups  the query's filtered top-K', K' doubling until it holds k distinct groups
//                (they are then exactly the k groups with the nearest best rows); each group's
//                rows come from that list when it holds group_size of them, or every passing
//                row of the group, else from a per-group search. Cost: a few scans of the
//                filter; does not grow with the groups.
//
// Host-only; tested on the CPU.

#ifndef SIEVE_QUERY_GROUP_PLAN_H_
#define SIEVE_QUERY_GROUP_PLAN_H_

#include <cstdint>
#include <string>

#include "sieve/db.h"

namespace sieve {

// Up to this many values with postings (summed over shards), few_groups: a handful of searches
// per query, one pass over the passing rows, and a cost that does not depend on how the groups
// lie among the nearest rows. Above it, many_groups, whose few scans and k fills beat one
// search per group from about a dozen groups on (tools/bench/results/2026-12-05-group-by/).
inline constexpr uint64_t kMaxFewGroups = 32;

// Searches per batch a grouped search sends to the executors at once (few_groups, fills), so
// that the per-search state an executor keeps (a filter, a candidate list) stays bounded.
inline constexpr uint32_t kGroupBatchSearches = 1024;

struct GroupPlanInput {
  uint64_t distinct_values = 0;  // values with postings, summed over the shards
  uint64_t max_passing_rows = 0;  // the largest passing count of any query's filter
  uint32_t k = 0;                 // groups asked for
  uint32_t group_size = 1;        // rows per group
};

struct GroupDecision {
  GroupStrategy strategy = GroupStrategy::kFewGroups;
  uint64_t first_scan_k = 0;  // many_groups: K' of the first round
  std::string reason;          // for explain
};

// The strategy, and for many_groups the first K': k × group_size, at least 2k, so that a
// first round usually holds k groups with their rows when groups are many. `forced` other
// than kAuto is taken as asked.
GroupDecision PlanGroups(const GroupPlanInput& in, GroupStrategy forced);

// The next round's K' after a round of `scan_k` that did not settle the groups: twice as many,
// and never past the passing rows (where the list holds them all).
uint64_t NextScanK(uint64_t scan_k, uint64_t max_passing_rows);

}  // namespace sieve

#endif  // SIEVE_QUERY_GROUP_PLAN_H_
