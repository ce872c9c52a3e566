// Copyright 2026 The Sieve Authors.

#include "engine/request_rules.h"

#include <string>

namespace sieve {

namespace {

Status ValidateGroupBy(const CollectionSpec& spec, const SearchRequest& request) {
  if (request.group_by.empty()) {
    if (request.group_size != 1) {
      return Status::InvalidArgument("group_size needs group_by (the attribute to group by)");
    }
    if (request.group_strategy != GroupStrategy::kAuto) {
      return Status::InvalidArgument(
          "group_strategy needs group_by (the attribute to group by)");
    }
    return Status::OK();
  }
  const AttributeSpec* attr = nullptr;
  std::string names;
  for (const AttributeSpec& a : spec.attributes) {
    if (a.name == request.group_by) attr = &a;
    names += (names.empty() ? "" : ", ") + a.name;
  }
  if (attr == nullptr) {
    return Status::InvalidArgument("group_by: collection '" + spec.name +
                                   "' has no attribute '" + request.group_by + "' (" +
                                   (names.empty() ? "it has none" : "it has " + names) + ")");
  }
  if (attr->type != AttrType::kInt && attr->type != AttrType::kString &&
      attr->type != AttrType::kBool && attr->type != AttrType::kTags) {
    return Status::InvalidArgument("group_by: attribute '" + attr->name + "' is " +
                                   AttrTypeName(attr->type) +
                                   "; a search groups by an int, string, bool or tags attribute");
  }
  if (request.group_size < 1 || request.group_size > kMaxGroupSize) {
    return Status::InvalidArgument("group_size must be within [1, " +
                                   std::to_string(kMaxGroupSize) + "], got " +
                                   std::to_string(request.group_size));
  }
  if (static_cast<int64_t>(request.k) * request.group_size > kMaxSearchK) {
    return Status::InvalidArgument(
        "k × group_size must be at most " + std::to_string(kMaxSearchK) + ", got " +
        std::to_string(request.k) + " × " + std::to_string(request.group_size));
  }
  return Status::OK();
}

}  // namespace

Status ValidateSearchRequest(const CollectionSpec& spec, const SearchRequest& request) {
  if (request.k < 1) {
    return Status::InvalidArgument("k must be at least 1, got " + std::to_string(request.k));
  }
  if (request.k > kMaxSearchK) {
    return Status::InvalidArgument("k must be at most " + std::to_string(kMaxSearchK) +
                                   ", got " + std::to_string(request.k));
  }
  const size_t nq = request.num_queries;
  if (!request.filter.empty() && !request.filters.empty()) {
    return Status::InvalidArgument(
        "a search takes one filter for every query (filter) or one per query (filters), not "
        "both");
  }
  if (!request.filters.empty() && request.filters.size() != nq) {
    return Status::InvalidArgument("filters: " + std::to_string(request.filters.size()) +
                                   " filters for " + std::to_string(nq) + " queries");
  }
  SIEVE_RETURN_IF_ERROR(ValidateGroupBy(spec, request));
  if (nq == 0) return Status::OK();
  if (request.queries == nullptr) return Status::InvalidArgument("no query vectors");
  if (request.dim != spec.dim) {
    return Status::InvalidArgument(
        "queries have " + std::to_string(request.dim) + " components, collection '" + spec.name +
        "' has dim " + std::to_string(spec.dim));
  }
  for (size_t q = 0; q < nq; ++q) {
    Status s = CheckVector(request.queries + q * spec.dim, spec.dim);
    if (!s.ok()) return Status::InvalidArgument("query " + std::to_string(q) + ": " + s.message());
  }
  return Status::OK();
}

Status ValidateSelectingFilter(const char* op, const std::string& filter) {
  if (filter.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::InvalidArgument(std::string(op) +
                                   ": the filter is empty (or only blanks), which would select "
                                   "every row; to select every row say so, e.g. "
                                   "\"id >= -9223372036854775808\"");
  }
  return Status::OK();
}

}  // namespace sieve
