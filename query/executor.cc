// Copyright 2026 The Sieve Authors.

#include "query/executor.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace sieve {

Status Executor::EstimateMemory(const ShardView& shard, const BatchFilters& filters,
                                const ExecRequest& request, MemoryEstimate* estimate) const {
  (void)shard;
  *estimate = MemoryEstimate();
  if (filters.passing_rows.size() != filters.sets.size()) {
    return Status::InvalidArgument("filters: passing_rows and sets differ in size");
  }
  uint64_t bytes =
      static_cast<uint64_t>(request.num_queries) * sizeof(std::vector<std::pair<uint32_t, float>>);
  for (uint32_t q = 0; q < request.num_queries; ++q) {
    const uint64_t pass = filters.passing_rows[filters.per_query() ? q : 0];
    bytes += std::min<uint64_t>(request.k, pass) * sizeof(std::pair<uint32_t, float>);
  }
  estimate->host_bytes = bytes;
  return Status::OK();
}

}  // namespace sieve
