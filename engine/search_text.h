// Copyright 2026 The Sieve Authors.
//
// Text and hybrid search (SearchRequest::text), the step DBImpl::SearchIn hands such a request
// to once it is parsed and its collection loaded:
//
//   compile   each (filter, shard) row set, as a vector search compiles them   CompileFilters
//   text      the query's terms and their statistics over every shard, then    RankText
//             per distinct filter its exact BM25 top `depth` (query/bm25.h)
//   vector    hybrid only: the vector search's own steps (place, plan, reserve, execute,
//             merge: engine/search_steps.h) with k = depth, on its usual device
//   fusion    hybrid only: per query, its two lists fused (sieve::Fusion)     FuseLists
//   include   the attributes and vectors `include` asks for                    FillIncludes
//
// Private to engine/.

#ifndef SIEVE_ENGINE_SEARCH_TEXT_H_
#define SIEVE_ENGINE_SEARCH_TEXT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/search_steps.h"
#include "query/bm25.h"

namespace sieve {

// What the text side needs of a collection's image.
struct TextSearchInput {
  const CollectionSpec* spec = nullptr;
  const CollectionMeta* meta = nullptr;
  const std::vector<std::shared_ptr<ShardIndex>>* shards = nullptr;
  DeviceSet* devices = nullptr;                          // the vector side's
  const std::vector<PlannerRule>* thresholds = nullptr;  // the vector side's
  FilterCache* filter_cache = nullptr;
  MemoryBudget* budget = nullptr;
};

// Runs a text or hybrid search (HasTextQuery(request)) whose request `parsed` holds
// (ParseSearch), timing its steps into `timer`; fills result->results (one list per
// ResultLists), their scores, explain's text plan and, for a hybrid search, the vector side's
// plan as a vector search fills it.
Status SearchText(const TextSearchInput& in, const ParsedSearch& parsed,
                  const SearchRequest& request, const SearchOptions& options, StageTimer* timer,
                  SearchResult* result);

// One row of a ranked list, with where it lives (for `include`).
struct RankedRow {
  double score = 0;  // larger is better
  int64_t id = 0;
  uint32_t shard = 0;  // in the collection's shard list
  uint32_t ordinal = 0;
};

// One query's two lists fused as `fusion` says (sieve::Fusion), the best k, best first: by
// fused score, larger first, then by the smaller id. `vector_list` is the vector side's rows
// best first with their distances (converted to larger-is-better scores for kWeighted by
// `metric`); `text_list` the text side's rows best first with their BM25 scores.
std::vector<RankedRow> FuseLists(const Fusion& fusion, Metric metric,
                                 const std::vector<Candidate>& vector_list,
                                 const std::vector<RankedRow>& text_list, size_t k);

}  // namespace sieve

#endif  // SIEVE_ENGINE_SEARCH_TEXT_H_
