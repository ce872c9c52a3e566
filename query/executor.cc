// Copyright 2026 The Sieve Authors.

#include "query/executor.h"

#include <algorithm>
#include <cmath>
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

TopKInput TopKInputFor(const ShardView& shard, const BatchFilters& filters,
                       const ExecRequest& request) {
  TopKInput in;
  in.path = request.path;
  in.metric = request.metric;
  in.dtype = shard.dtype;
  in.k = request.k;
  in.queries = request.num_queries;
  in.dim = shard.dim;
  in.columns = shard.rows;
  const size_t sets = filters.sets.size();
  if (sets > 1 && filters.passing_rows.size() == sets) {
    uint64_t sum = 0;
    for (uint64_t n : filters.passing_rows) sum += n;
    RowSet own;
    const RowSet* all = filters.union_set;
    if (all == nullptr) {
      own = RowSet::Union(filters.sets.data(), sets);
      all = &own;
    }
    const uint64_t union_rows = all->Cardinality();
    // Every set is part of the union: the mean reaches it only when every set is the union.
    in.per_query = sum / sets != union_rows;
    if (request.path == SearchPath::kGather) in.columns = union_rows;
  } else if (sets == 1 && request.path == SearchPath::kGather) {
    in.columns = filters.passing_rows.empty() ? 0 : filters.passing_rows[0];
  }
  // As the GPU executor computes them: each query's squared norm summed in double and stored
  // as a float, and the largest magnitude of any query's element.
  float max_norm = 0, max_abs = 0;
  for (uint32_t q = 0; q < request.num_queries && request.queries != nullptr; ++q) {
    double acc = 0;
    for (uint32_t j = 0; j < shard.dim; ++j) {
      const double v = request.queries[size_t{q} * shard.dim + j];
      acc += v * v;
      max_abs = std::max(max_abs, static_cast<float>(std::fabs(v)));
    }
    max_norm = std::max(max_norm, static_cast<float>(acc));
  }
  in.max_query_sq_norm = max_norm;
  in.query_scale = QueryScale(max_abs);
  in.max_row_sq_norm = shard.max_sq_norm;
  if (std::isinf(shard.max_sq_norm) && shard.sq_norms != nullptr) {
    float most = 0;
    for (uint32_t r = 0; r < shard.rows; ++r) {
      const float n = shard.sq_norms[r];
      if (!(n <= most)) most = std::isnan(n) ? INFINITY : n;
    }
    in.max_row_sq_norm = most;
  }
  return in;
}

void PlanRequest(const Executor& executor, const ShardView& shard, const BatchFilters& filters,
                 ExecRequest* request) {
  request->topk = PlanTopK(TopKInputFor(shard, filters, *request), executor.topk_abilities());
}

}  // namespace sieve
