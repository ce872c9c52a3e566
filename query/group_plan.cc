// Copyright 2026 The Sieve Authors.

#include "query/group_plan.h"

#include <algorithm>

namespace sieve {

GroupDecision PlanGroups(const GroupPlanInput& in, GroupStrategy forced) {
  GroupDecision d;
  const uint64_t size = std::max<uint32_t>(in.group_size, 1);
  d.first_scan_k = std::max<uint64_t>(uint64_t{in.k} * size, uint64_t{in.k} * 2);
  d.first_scan_k = std::max<uint64_t>(std::min(d.first_scan_k, in.max_passing_rows), 1);
  if (forced != GroupStrategy::kAuto) {
    d.strategy = forced;
    d.reason = std::string("asked for (") + GroupStrategyName(forced) + ")";
    return d;
  }
  if (in.max_passing_rows <= d.first_scan_k) {
    d.strategy = GroupStrategy::kManyGroups;
    d.reason = "every passing row (" + std::to_string(in.max_passing_rows) +
               ") fits one scan of K' = " + std::to_string(d.first_scan_k);
  } else if (in.distinct_values <= kMaxFewGroups) {
    d.strategy = GroupStrategy::kFewGroups;
    d.reason = std::to_string(in.distinct_values) + " values <= " +
               std::to_string(kMaxFewGroups) + ": one search per group";
  } else {
    d.strategy = GroupStrategy::kManyGroups;
    d.reason = std::to_string(in.distinct_values) + " values > " +
               std::to_string(kMaxFewGroups) + ": top-K' doubled until k groups";
  }
  return d;
}

uint64_t NextScanK(uint64_t scan_k, uint64_t max_passing_rows) {
  return std::max<uint64_t>(std::min(scan_k * 2, max_passing_rows), scan_k);
}

}  // namespace sieve
