// Copyright 2026 The Sieve Authors.
//
// The grouped search (SearchRequest::group_by), the step of DBImpl::SearchIn that replaces
// plan → execute → merge → include when a request groups its results. It runs over the same
// steps (engine/search_steps.h) with row sets of its own, so every path and device stays the
// exact top-k it is, and plans its groups with query/group_plan.h. Private to engine/.

#ifndef SIEVE_ENGINE_SEARCH_GROUPS_H_
#define SIEVE_ENGINE_SEARCH_GROUPS_H_

#include <memory>
#include <vector>

#include "engine/search_steps.h"

namespace sieve {

// What a grouped search reads, from the steps that ran before it.
struct GroupSearchContext {
  const ParsedSearch& parsed;
  const SearchRequest& request;
  const SearchOptions& options;
  const CollectionSpec& spec;
  const std::vector<PlannerRule>& thresholds;
  DeviceSet* devices;
  MemoryBudget* budget;
  const std::vector<std::shared_ptr<ShardIndex>>& shards;
};

// Given each shard's compiled filters (`work`, after CompileFilters), fills each query's
// Neighbors::groups (with what `include` asks for) and explain's group plan, shards, devices,
// passing rows and memory.
Status SearchGroups(const GroupSearchContext& ctx, const std::vector<ShardWork>& work,
                    SearchResult* result);

}  // namespace sieve

#endif  // SIEVE_ENGINE_SEARCH_GROUPS_H_
