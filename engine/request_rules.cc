// Copyright 2026 The Sieve Authors.

#include "engine/request_rules.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace sieve {

Status ValidateSearchRequest(const CollectionSpec& spec, const SearchRequest& request) {
  if (request.k < 1) {
    return Status::InvalidArgument("k must be at least 1, got " + std::to_string(request.k));
  }
  if (request.k > kMaxSearchK) {
    return Status::InvalidArgument("k must be at most " + std::to_string(kMaxSearchK) +
                                   ", got " + std::to_string(request.k));
  }
  const size_t nq = ResultLists(request);
  SIEVE_RETURN_IF_ERROR(ValidateTextQuery(spec, request));
  if (!request.filter.empty() && !request.filters.empty()) {
    return Status::InvalidArgument(
        "a search takes one filter for every query (filter) or one per query (filters), not "
        "both");
  }
  if (!request.filters.empty() && request.filters.size() != nq) {
    return Status::InvalidArgument("filters: " + std::to_string(request.filters.size()) +
                                   " filters for " + std::to_string(nq) +
                                   (request.num_queries == 0 ? " query (a text query is one)"
                                                             : " queries"));
  }
  if (request.num_queries == 0) return Status::OK();
  if (request.queries == nullptr) return Status::InvalidArgument("no query vectors");
  if (request.dim != spec.dim) {
    return Status::InvalidArgument(
        "queries have " + std::to_string(request.dim) + " components, collection '" + spec.name +
        "' has dim " + std::to_string(spec.dim));
  }
  for (size_t q = 0; q < request.num_queries; ++q) {
    Status s = CheckVector(request.queries + q * spec.dim, spec.dim);
    if (!s.ok()) return Status::InvalidArgument("query " + std::to_string(q) + ": " + s.message());
  }
  return Status::OK();
}

namespace {

// The fusion's fields are checked whether or not the request is hybrid: a value out of range
// is refused, never ignored.
Status ValidateFusion(const SearchRequest& request) {
  const Fusion& f = request.fusion;
  if (!std::isfinite(f.rrf_c) || f.rrf_c < 0) {
    return Status::InvalidArgument("fusion: the RRF constant must be a finite number >= 0, got " +
                                   std::to_string(f.rrf_c));
  }
  if (!std::isfinite(f.vector_weight) || f.vector_weight < 0 || !std::isfinite(f.text_weight) ||
      f.text_weight < 0 || (f.vector_weight == 0 && f.text_weight == 0)) {
    return Status::InvalidArgument(
        "fusion: the weights must be finite numbers >= 0, not both 0; got vector " +
        std::to_string(f.vector_weight) + " and text " + std::to_string(f.text_weight));
  }
  if (f.depth != 0 && (f.depth < request.k || f.depth > kMaxSearchK)) {
    return Status::InvalidArgument("fusion: depth must be 0 (the default, max(k, " +
                                   std::to_string(kDefaultFusionDepth) + ")) or k (" +
                                   std::to_string(request.k) + ") to " +
                                   std::to_string(kMaxSearchK) + ", got " +
                                   std::to_string(f.depth));
  }
  return Status::OK();
}

}  // namespace

Status ValidateTextQuery(const CollectionSpec& spec, const SearchRequest& request) {
  SIEVE_RETURN_IF_ERROR(ValidateFusion(request));
  if (!HasTextQuery(request)) return Status::OK();
  if (request.text_field.empty() || request.text.empty()) {
    return Status::InvalidArgument(
        "a text query needs both text_field (the text attribute searched) and text (the query)");
  }
  std::string text_attrs;
  const AttributeSpec* field = nullptr;
  for (const AttributeSpec& a : spec.attributes) {
    if (a.name == request.text_field) field = &a;
    if (a.type == AttrType::kText) text_attrs += (text_attrs.empty() ? "" : ", ") + a.name;
  }
  if (text_attrs.empty()) text_attrs = "none";
  if (field == nullptr) {
    return Status::InvalidArgument("text_field: collection '" + spec.name +
                                   "' has no attribute '" + request.text_field +
                                   "' (text attributes: " + text_attrs + ")");
  }
  if (field->type != AttrType::kText) {
    return Status::InvalidArgument("text_field: attribute '" + field->name + "' is " +
                                   AttrTypeName(field->type) +
                                   ", not text (text attributes: " + text_attrs + ")");
  }
  return Status::OK();
}

int FusionDepth(const SearchRequest& request) {
  if (request.fusion.depth != 0) return request.fusion.depth;
  return std::max(request.k, kDefaultFusionDepth);
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
