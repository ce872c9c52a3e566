// Copyright 2026 The Sieve Authors.
//
// The steps of one search (DBImpl::Search, engine/db_search.cc), in the order they run:
//
//   parse     the request's rules, `include`, and each distinct filter text     ParseSearch
//   devices   the executors the search runs on and their planner thresholds    (DBImpl)
//   load      the collection's rows in memory, on first use                     (DBImpl)
//   place     which device holds each shard                                     PlaceShards
//   compile   each (filter, shard) row set, from the cache or compiled          CompileFilters
//   plan      each shard's path, candidate count, top-k strategy and products   PlanShards
//   reserve   the host memory the rest needs, from the budget                   ReserveMemory
//   execute   every device's shards at once, each shard's candidates refined    ExecuteShards
//   merge     per query, every shard's candidates merged exactly on (dist, id)  MergeCandidates
//   include   the attributes and vectors `include` asks for                     FillIncludes
//
// Each step takes what the earlier ones produced and fills its own output; StageTimer times
// each into Explain::stage_ms under the step's name. Private to engine/.

#ifndef SIEVE_ENGINE_SEARCH_STEPS_H_
#define SIEVE_ENGINE_SEARCH_STEPS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/db_util.h"
#include "engine/device_set.h"
#include "engine/filter_cache.h"
#include "engine/memory_budget.h"
#include "engine/shard_placement.h"
#include "filter/filter.h"
#include "index/shard_index.h"
#include "query/executor.h"
#include "query/planner.h"
#include "sieve/db.h"

namespace sieve {

// Times each step into explain->stage_ms, in the order they ran. A disabled timer
// (SearchOptions::stage_times false) runs the steps without reading a clock or recording
// anything: a clock read per step is a measurable part of a small search's cost.
class StageTimer {
 public:
  explicit StageTimer(Explain* explain, bool enabled = true)
      : explain_(explain), enabled_(enabled), start_(enabled ? Clock::now() : Clock::time_point()) {}

  // Runs `step` and records its time under `stage`, whatever it returns.
  template <typename Step>
  Status Run(const char* stage, Step&& step) {
    if (!enabled_) return step();
    const auto t0 = Clock::now();
    Status s = step();
    Add(stage, MsSince(t0));
    return s;
  }
  // Runs a step that cannot fail and records its time under `stage`.
  template <typename Step>
  void Time(const char* stage, Step&& step) {
    if (!enabled_) {
      step();
      return;
    }
    const auto t0 = Clock::now();
    step();
    Add(stage, MsSince(t0));
  }
  void Add(std::string stage, double ms) {
    if (enabled_) explain_->stage_ms.emplace_back(std::move(stage), ms);
  }
  // "total": since the timer was made.
  void Total() {
    if (enabled_) Add("total", MsSince(start_));
  }
  bool enabled() const { return enabled_; }

 private:
  Explain* explain_;
  bool enabled_;
  Clock::time_point start_;
};

// What ParseSearch makes of a request.
struct ParsedSearch {
  std::vector<std::string> texts;                 // the distinct filter texts
  std::vector<std::unique_ptr<Filter>> filters;   // parsed, one per text
  std::vector<uint32_t> filter_of;                // query -> index into texts
  bool per_query = false;                         // more than one distinct filter: a bitmap
  std::vector<size_t> include_attrs;              // schema indexes of the included attributes
};

// The request's rules (ValidateSearchRequest), the included attributes (their names into
// result->attribute_names) and each distinct filter text parsed once. Sets explain's
// filter_mode.
Status ParseSearch(const CollectionSpec& spec, const SearchRequest& request, ParsedSearch* parsed,
                   SearchResult* result);

// One shard's share of the search, filled step by step.
struct ShardWork {
  const ShardIndex* shard = nullptr;
  uint32_t index = 0;   // in the collection's shard list
  uint32_t device = 0;  // in the DeviceSet (place)
  ShardPlacement::Shard load;
  // compile: one row set per distinct filter, from this search or an earlier one (FilterCache).
  std::vector<std::shared_ptr<const RowSet>> sets;
  RowSet union_set;  // plan, bitmap: the union of the sets, for the planner and the executor
  BatchFilters bf;   // plan: the sets as the executor takes them
  ShardView view;    // plan
  ExecRequest er;    // plan
  uint64_t max_pass = 0;  // plan: the largest passing count of any filter; 0 = nothing to search
};

// Every shard of the collection, and the device that holds it (its rows stay resident there
// from search to search).
Status PlaceShards(const CollectionMeta& meta,
                   const std::vector<std::shared_ptr<ShardIndex>>& shards, DeviceSet* devices,
                   std::vector<ShardWork>* work);

// Each (filter, shard) row set, taken from `cache` or compiled and put there. *sets_bytes is
// their memory; ResourceExhausted once it passes the budget.
Status CompileFilters(const ParsedSearch& parsed, FilterCache* cache, uint64_t budget_bytes,
                      std::vector<ShardWork>* work, uint64_t* sets_bytes, Explain* explain);

// Each shard's path and candidate count, from its own passing counts against its device's
// thresholds (query/planner.h), and its top-k plan for that device's executor
// (query/topk_plan.h); what its executor is asked. Adds each union set's memory to
// *sets_bytes and a ShardPlan per shard to explain.
void PlanShards(const ParsedSearch& parsed, const SearchRequest& request,
                const SearchOptions& options, const CollectionSpec& spec,
                const std::vector<PlannerRule>& thresholds, const DeviceSet& devices,
                std::vector<ShardWork>* work, uint64_t* sets_bytes, Explain* explain);

// Counts what the rest of the search allocates (each device's executor, every shard's
// candidates, the results and what `include` adds) and reserves it; ResourceExhausted naming
// the sizes when it is more than the whole budget.
Status ReserveMemory(const ParsedSearch& parsed, const SearchRequest& request,
                     const CollectionSpec& spec, const std::vector<ShardWork>& work,
                     DeviceSet* devices, uint64_t sets_bytes, MemoryBudget* budget,
                     MemoryBudget::Reservation* reservation, Explain* explain);

// A shard's candidate: its exact distance and id, and where its row is (for `include`).
struct Candidate {
  double distance;
  int64_t id;
  uint32_t shard;
  uint32_t ordinal;
};

// One shard's output.
struct ShardOut {
  ExecResult res;
  std::vector<std::vector<Candidate>> cand;  // per query, refined in float64
  double exec_ms = 0, refine_ms = 0;
  Status status;
};

// Every device searches its shards, all devices at once; each shard's candidates are refined
// in float64 and mapped to ids by the thread that searched it. Fills explain's per-shard
// select and time, its devices, and the "refine" stage (summed over shards).
Status ExecuteShards(const SearchRequest& request, const CollectionSpec& spec,
                     DeviceSet* devices, std::vector<ShardWork>* work,
                     std::vector<ShardOut>* outs, StageTimer* timer, Explain* explain);

// Per query, every shard's candidates merged exactly on (distance, id): the best k into
// result->results; *kept holds them with their rows, for FillIncludes.
Status MergeCandidates(const SearchRequest& request, const CollectionSpec& spec,
                       std::vector<ShardOut>* outs, std::vector<std::vector<Candidate>>* kept,
                       SearchResult* result);

// The attributes and vectors `include` asks for, of every result row.
void FillIncludes(const ParsedSearch& parsed, const SearchRequest& request,
                  const std::vector<std::shared_ptr<ShardIndex>>& shards,
                  const std::vector<std::vector<Candidate>>& kept, SearchResult* result);

}  // namespace sieve

#endif  // SIEVE_ENGINE_SEARCH_STEPS_H_
