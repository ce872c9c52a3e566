// Copyright 2026 The Sieve Authors.
//
// The rounds that range search (engine/search_range.cc) and pages (engine/search_pages.cc) run
// in place of a plain top-k's plan, reserve, execute and merge: each round is those steps over
// a window of K rows per query, for the queries whose rows the last window did not prove
// (query/window_plan.h). The shards are placed and their filters compiled once, before the
// first round. Private to engine/.

#ifndef SIEVE_ENGINE_SEARCH_WINDOW_H_
#define SIEVE_ENGINE_SEARCH_WINDOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/search_steps.h"

namespace sieve {

// One query's rows after a round: every shard's candidates in exact (distance, id) order, their
// keys (smaller is better), and the bound below which they are every passing row
// (query/window_plan.h).
struct WindowRows {
  std::vector<Candidate> rows;
  std::vector<double> keys;
  float bound = 0;
};

// What the rounds share: the search's request, its parsed filters and its compiled shards.
struct WindowSearch {
  const ParsedSearch* parsed = nullptr;
  const SearchRequest* request = nullptr;
  const SearchOptions* options = nullptr;
  const CollectionSpec* spec = nullptr;
  const std::vector<PlannerRule>* thresholds = nullptr;
  DeviceSet* devices = nullptr;
  const std::vector<ShardWork>* compiled = nullptr;  // after CompileFilters
  uint64_t sets_bytes = 0;
  MemoryBudget* budget = nullptr;
  // The stage times of every round, summed by name; the last round's shards and devices.
  Explain rounds;
};

// Searches the request's queries `queries` (indexes, ascending) with a window of `window` rows
// each: plan, reserve, execute and merge as a plain top-k does, into (*rows)[i] for
// queries[i]. Adds the round to explain's windows and window_queries.
Status RunWindow(WindowSearch* ws, const std::vector<size_t>& queries, uint64_t window,
                 std::vector<WindowRows>* rows, Explain* explain);

// Ends the rounds: their stage times (summed by name) into `timer`, the last round's shard
// and device plans and passing rows into `explain`, the largest memory of any round.
void FinishWindows(WindowSearch* ws, StageTimer* timer, Explain* explain);

// Puts a query's rows into its Neighbors (float32 distances). NotSupported for a distance a
// float32 cannot hold (as MergeCandidates).
Status FillNeighbors(size_t q, const std::vector<Candidate>& rows, Neighbors* out);

// Range search (SearchRequest::radius): every query's rows within the radius, at most
// `limit`, into result->results and *kept (for FillIncludes); Neighbors::limit_reached.
Status SearchRange(WindowSearch* ws, std::vector<std::vector<Candidate>>* kept,
                   SearchResult* result);

// Pages (SearchRequest::offset or after): every query's page into result->results and *kept,
// with Neighbors::next.
Status SearchPages(WindowSearch* ws, std::vector<std::vector<Candidate>>* kept,
                   SearchResult* result);

// Runs a range search or pages in place of plan, reserve, execute, merge: the rounds, then the
// includes; the explain's stages and plans from the rounds.
Status SearchWindows(const ParsedSearch& parsed, const SearchRequest& request,
                     const SearchOptions& options, const CollectionSpec& spec,
                     const std::vector<PlannerRule>& thresholds, DeviceSet* devices,
                     const std::vector<ShardWork>& work, uint64_t sets_bytes, MemoryBudget* budget,
                     const std::vector<std::shared_ptr<ShardIndex>>& shards, StageTimer* timer,
                     SearchResult* result);

// A page cursor (SearchRequest::after, Neighbors::next): the last row's float64 distance and
// id, and the rows before the page after it (where the next window starts).
struct PageCursor {
  double distance = 0;
  int64_t id = 0;
  uint64_t position = 0;
};
std::string EncodeCursor(const PageCursor& cursor);
// InvalidArgument for text that no search gave as a cursor.
Status DecodeCursor(const std::string& text, PageCursor* cursor);

}  // namespace sieve

#endif  // SIEVE_ENGINE_SEARCH_WINDOW_H_
