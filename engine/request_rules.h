// Copyright 2026 The Sieve Authors.
//
// The rules a request must follow, written once: every front end (the CLI, the server,
// Python, Ray) passes the engine's message on instead of checking on its own.

#ifndef SIEVE_ENGINE_REQUEST_RULES_H_
#define SIEVE_ENGINE_REQUEST_RULES_H_

#include "sieve/db.h"

namespace sieve {

// k within [1, kMaxSearchK]; `filter` and `filters` not both set; `filters` one per result list
// (ResultLists); the text query's rules (ValidateTextQuery); group-by's; range and page rules
// (ValidateRangeAndPages); a text query, group_by, radius and pages not combined;
// query vectors present, of the collection's dim, finite and within the norm range ingest
// accepts; group_by naming an int, string, bool or tags attribute, group_size within
// [1, kMaxGroupSize] and k × group_size at most kMaxSearchK (group_size and group_strategy
// only with group_by). InvalidArgument naming the rule (and the query) otherwise.
Status ValidateSearchRequest(const CollectionSpec& spec, const SearchRequest& request);

// Range search and pages: radius finite, limit within [1, kMaxSearchK], and neither offset nor
// after with it; offset and after not both; 0 <= offset <= kMaxSearchK - k; one cursor per
// query, each one a search gave, its position + k <= kMaxSearchK. Part of
// ValidateSearchRequest.
Status ValidateRangeAndPages(const SearchRequest& request);
// Whether the request holds a text query (SearchRequest::text or text_field set).
inline bool HasTextQuery(const SearchRequest& request) {
  return !request.text.empty() || !request.text_field.empty();
}
// The result lists a search returns: one per query vector; one for a text-only search.
inline size_t ResultLists(const SearchRequest& request) {
  return request.num_queries == 0 && HasTextQuery(request) ? 1 : request.num_queries;
}
// With a text query: text and text_field both set, text_field a text attribute of `spec`, and
// the fusion's constant, weights and depth in their ranges (sieve::Fusion). OK without one.
Status ValidateTextQuery(const CollectionSpec& spec, const SearchRequest& request);
// Each side's list length in a hybrid search: Fusion::depth, or max(k, kDefaultFusionDepth).
int FusionDepth(const SearchRequest& request);

// A filter that selects rows to change (delete, update): not blank. "" or whitespace alone
// would select every row; InvalidArgument naming `op`, which says how to select them all.
Status ValidateSelectingFilter(const char* op, const std::string& filter);

}  // namespace sieve

#endif  // SIEVE_ENGINE_REQUEST_RULES_H_
