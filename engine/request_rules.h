// Copyright 2026 The Sieve Authors.
//
// The rules a request must follow, written once: every front end (the CLI, the server,
// Python, Ray) passes the engine's message on instead of checking on its own.

#ifndef SIEVE_ENGINE_REQUEST_RULES_H_
#define SIEVE_ENGINE_REQUEST_RULES_H_

#include "sieve/db.h"

namespace sieve {

// k within [1, kMaxSearchK]; `filter` and `filters` not both set; `filters` one per query;
// range and page rules (ValidateRangeAndPages);
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

// A filter that selects rows to change (delete, update): not blank. "" or whitespace alone
// would select every row; InvalidArgument naming `op`, which says how to select them all.
Status ValidateSelectingFilter(const char* op, const std::string& filter);

}  // namespace sieve

#endif  // SIEVE_ENGINE_REQUEST_RULES_H_
