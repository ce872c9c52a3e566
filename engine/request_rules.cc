// Copyright 2026 The Sieve Authors.

#include "engine/request_rules.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/search_window.h"

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
    return Status::InvalidArgument("k must be at most " + std::to_string(kMaxSearchK) + ", got " +
                                   std::to_string(request.k));
  }
  const size_t nq = ResultLists(request);
  SIEVE_RETURN_IF_ERROR(ValidateTextQuery(spec, request));
  if (HasTextQuery(request) &&
      (!request.group_by.empty() || request.radius || request.offset || !request.after.empty())) {
    return Status::InvalidArgument(
        "a text query (text, text_field) does not combine with group_by, radius, offset or "
        "after: text and hybrid searches return the k best rows");
  }
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
  SIEVE_RETURN_IF_ERROR(ValidateGroupBy(spec, request));
  SIEVE_RETURN_IF_ERROR(ValidateRangeAndPages(request));
  if (!request.group_by.empty() && (request.radius || request.offset || !request.after.empty())) {
    return Status::InvalidArgument(
        "group_by does not combine with radius, offset or after: a grouped search returns the k "
        "best groups");
  }
  if (request.num_queries == 0) return Status::OK();
  if (request.queries == nullptr) return Status::InvalidArgument("no query vectors");
  if (request.dim != spec.dim) {
    return Status::InvalidArgument("queries have " + std::to_string(request.dim) +
                                   " components, collection '" + spec.name + "' has dim " +
                                   std::to_string(spec.dim));
  }
  for (size_t q = 0; q < request.num_queries; ++q) {
    Status s = CheckVector(request.queries + q * spec.dim, spec.dim);
    if (!s.ok()) return Status::InvalidArgument("query " + std::to_string(q) + ": " + s.message());
  }
  return Status::OK();
}

Status ValidateRangeAndPages(const SearchRequest& request) {
  const size_t nq = request.num_queries;
  if (request.radius) {
    if (!std::isfinite(*request.radius)) {
      return Status::InvalidArgument("radius must be a finite number");
    }
    if (request.offset || !request.after.empty()) {
      return Status::InvalidArgument(
          "a range search (radius) returns every row within the radius, up to limit: it takes "
          "no offset or after");
    }
    if (request.limit < 1 || request.limit > kMaxSearchK) {
      return Status::InvalidArgument("limit must be 1 to " + std::to_string(kMaxSearchK) +
                                     ", got " + std::to_string(request.limit));
    }
  }
  if (request.offset && !request.after.empty()) {
    return Status::InvalidArgument(
        "a page starts at an offset or after a cursor (after), not both");
  }
  if (request.offset) {
    const int64_t offset = *request.offset;
    if (offset < 0 || offset > kMaxSearchK - request.k) {
      return Status::InvalidArgument("offset must be 0 to " + std::to_string(kMaxSearchK) +
                                     " - k (offset + k <= " + std::to_string(kMaxSearchK) +
                                     "), got " + std::to_string(offset));
    }
  }
  if (!request.after.empty()) {
    if (request.after.size() != nq) {
      return Status::InvalidArgument("after: " + std::to_string(request.after.size()) +
                                     " cursors for " + std::to_string(nq) + " queries");
    }
    for (size_t q = 0; q < nq; ++q) {
      if (request.after[q].empty()) continue;
      PageCursor cursor;
      Status s = DecodeCursor(request.after[q], &cursor);
      if (!s.ok()) return s.WithContext("after: query " + std::to_string(q));
      if (cursor.position > static_cast<uint64_t>(kMaxSearchK - request.k)) {
        return Status::InvalidArgument(
            "after: query " + std::to_string(q) + ": the cursor is " +
            std::to_string(cursor.position) + " rows deep; pages reach row " +
            std::to_string(kMaxSearchK) +
            " at most (position + k <= " + std::to_string(kMaxSearchK) + ")");
      }
    }
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

}  // namespace sieve
