// Copyright 2026 The Sieve Authors.
//
// DBImpl::Search: the steps of one search, in order (engine/search_steps.h says what each
// takes and gives). Each is timed into the explain under its name.

#include "engine/db_impl.h"
#include "engine/request_rules.h"
#include "engine/search_groups.h"
#include "engine/search_steps.h"
#include "engine/search_text.h"
#include "engine/search_window.h"

namespace sieve {

Status DBImpl::Search(const std::string& collection, const SearchRequest& request,
                      const SearchOptions& options, SearchResult* result) {
  *result = SearchResult();
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollectionAt(options.snapshot, collection, &c));
  return SearchIn(c, request, options, result);
}

Status DBImpl::SearchIn(const std::shared_ptr<CollectionState>& c, const SearchRequest& request,
                        const SearchOptions& options, SearchResult* result) {
  *result = SearchResult();
  Explain& ex = result->explain;
  ex.memory_budget_bytes = budget_.bytes();
  StageTimer timer(&ex, options.stage_times);
  ReadView view;  // the live image, or the snapshot's (options.snapshot)
  SIEVE_RETURN_IF_ERROR(ResolveRead(c, options.snapshot, &view));
  const CollectionSpec& spec = view.spec;

  ParsedSearch parsed;
  SIEVE_RETURN_IF_ERROR(
      timer.Run("parse", [&] { return ParseSearch(spec, request, &parsed, result); }));

  if (ResultLists(request) == 0) {
    // Nothing to search (no query vectors, no text query): the request is checked, and no
    // device is asked for, so a device this machine lacks is no error here.
    timer.Total();
    return Status::OK();
  }

  DeviceSet* devices = nullptr;
  std::vector<PlannerRule> thresholds;
  SIEVE_RETURN_IF_ERROR(timer.Run(
      "devices", [&] { return ResolveDevices(options.device, &devices, &thresholds, &ex); }));

  double load_ms = 0;
  SIEVE_RETURN_IF_ERROR(BeginRead(c, /*vectors=*/true, &load_ms, &view));
  if (load_ms > 0) timer.Add("load", load_ms);
  if (view.reparse) {
    // The schema changed since the request was parsed: parse it again against the image's.
    parsed = ParsedSearch();
    SIEVE_RETURN_IF_ERROR(ParseSearch(spec, request, &parsed, result));
  }
  if (HasTextQuery(request)) {  // BM25, or hybrid: engine/search_text.h
    return SearchText({&spec, view.meta, view.shards, devices, &thresholds, &filter_cache_,
                       &budget_},
                      parsed, request, options, &timer, result);
  }
  result->results.resize(request.num_queries);
  if (request.num_queries == 0) return Status::OK();

  std::vector<ShardWork> work;
  SIEVE_RETURN_IF_ERROR(
      timer.Run("place", [&] { return PlaceShards(*view.meta, *view.shards, devices, &work); }));

  // Every shard is compiled and planned before anything large is allocated, so that what the
  // search needs is known, and refused or reserved, first.
  uint64_t sets_bytes = 0;
  SIEVE_RETURN_IF_ERROR(timer.Run("compile", [&] {
    return CompileFilters(parsed, &filter_cache_, budget_.bytes(), &work, &sets_bytes, &ex);
  }));
  if (!request.group_by.empty()) {  // plan → include, per group (engine/search_groups.cc)
    SIEVE_RETURN_IF_ERROR(timer.Run("group", [&] {
      return SearchGroups(
          {parsed, request, options, spec, thresholds, devices, &budget_, *view.shards}, work,
          result);
    }));
    timer.Total();
    return Status::OK();
  }
  // Range search and pages: rounds of plan, reserve, execute and merge over a widening window.
  if (request.radius || request.offset || !request.after.empty()) {
    return SearchWindows(parsed, request, options, spec, thresholds, devices, work, sets_bytes,
                         &budget_, *view.shards, &timer, result);
  }
  timer.Time("plan", [&] {
    PlanShards(parsed, request, options, spec, thresholds, *devices, &work, &sets_bytes, &ex);
  });
  MemoryBudget::Reservation reservation;
  SIEVE_RETURN_IF_ERROR(timer.Run("reserve", [&] {
    return ReserveMemory(parsed, request, spec, work, devices, sets_bytes, &budget_,
                         &reservation, &ex);
  }));

  std::vector<ShardOut> outs;
  SIEVE_RETURN_IF_ERROR(timer.Run("execute", [&] {
    return ExecuteShards(request, spec, devices, &work, &outs, &timer, &ex);
  }));
  std::vector<std::vector<Candidate>> kept;
  SIEVE_RETURN_IF_ERROR(
      timer.Run("merge", [&] { return MergeCandidates(request, spec, &outs, &kept, result); }));
  if (!request.include.empty()) {
    timer.Time("include", [&] { FillIncludes(parsed, request, *view.shards, kept, result); });
  }
  timer.Total();
  return Status::OK();
}

}  // namespace sieve
