// Copyright 2026 The Sieve Authors.

#include "query/executor.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace sieve {

Status ValidateFilters(const ShardView& shard, const BatchFilters& filters, uint32_t num_queries) {
  if (filters.sets.empty() || (filters.sets.size() != 1 && filters.sets.size() != num_queries)) {
    return Status::InvalidArgument("filters must hold one set or one per query (" +
                                   std::to_string(filters.sets.size()) + " sets for " +
                                   std::to_string(num_queries) + " queries)");
  }
  if (filters.passing_rows.size() != filters.sets.size()) {
    return Status::InvalidArgument("filters: " + std::to_string(filters.passing_rows.size()) +
                                   " passing counts for " + std::to_string(filters.sets.size()) +
                                   " sets");
  }
  for (size_t i = 0; i < filters.sets.size(); ++i) {
    const RowSet* set = filters.sets[i];
    if (set == nullptr) return Status::InvalidArgument("filter " + std::to_string(i) + " is null");
    if (set->End() > shard.rows) {
      return Status::InvalidArgument("filter " + std::to_string(i) + " holds row " +
                                     std::to_string(set->End() - 1) + " of a shard of " +
                                     std::to_string(shard.rows) + " rows");
    }
    if (filters.passing_rows[i] != set->Cardinality()) {
      return Status::InvalidArgument("filter " + std::to_string(i) + ": its passing count " +
                                     std::to_string(filters.passing_rows[i]) + " is not its " +
                                     std::to_string(set->Cardinality()) + " rows");
    }
  }
  return Status::OK();
}

Status ValidateExecRequest(const ShardView& shard, const BatchFilters& filters,
                           const ExecRequest& request) {
  if (request.k == 0) return Status::InvalidArgument("k must be at least 1");
  if (request.num_queries > 0 && request.queries == nullptr) {
    return Status::InvalidArgument("queries is null");
  }
  if (request.path != SearchPath::kSddmm && request.path != SearchPath::kGather &&
      request.path != SearchPath::kDense) {
    return Status::InvalidArgument("path must be sddmm, gather or dense (the planner chooses)");
  }
  if (request.metric != Metric::kL2 && request.metric != Metric::kInnerProduct &&
      request.metric != Metric::kCosine) {
    return Status::InvalidArgument("unknown metric " +
                                   std::to_string(static_cast<int>(request.metric)));
  }
  if (shard.dtype != DType::kFloat32 && shard.dtype != DType::kFloat16) {
    return Status::InvalidArgument("unknown vector dtype " +
                                   std::to_string(static_cast<int>(shard.dtype)));
  }
  if (shard.dim == 0) return Status::InvalidArgument("shard dim is 0");
  if (shard.rows > 0 && shard.vectors == nullptr) {
    return Status::InvalidArgument("shard has rows but no vectors");
  }
  return ValidateFilters(shard, filters, request.num_queries);
}

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
