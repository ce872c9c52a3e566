// Copyright 2026 The Sieve Authors.
//
// The plan of range search and pages (SearchRequest::radius, offset, after): both run the
// exact top-k of every shard over a window of K rows per query, and widen the window until the
// rows they return are provably every row that belongs there. Pure functions of counts and
// float64 distances, so that every decision is tested on the CPU (docs/planner.md
// #range-search-and-pages).
//
// Keys: candidates are ranked by a key where smaller is better (the distance for l2 and cosine,
// the negated score for ip, as in query/topk.h), ties to the smaller id.
//
// What a shard's window proves. An executor asked for C candidates of a query returns the C
// best of its passing rows by its float32 (or rescored) distances; the engine refines them in
// float64. C is the window K plus the planner's margin m = C - K (query/planner.h
// CandidateCount). Any row left out ranked behind all C in float32, so behind the m rows at the
// list's tail: every row whose float64 key rounds (to float32) strictly below the key of the
// list's (C - m + 1)-th best row is in the list. That is ShardCoverBound; a shard asked for at
// least its passing rows holds them all (+inf). The query's bound is the smallest over its
// shards: the rows of the merged list whose keys round below it are exactly the query's best
// rows, in exact (key, id) order, and rows tied in float32 at a window's edge (duplicate
// vectors) are never split by it: the window widens until the tie lies inside.

#ifndef SIEVE_QUERY_WINDOW_PLAN_H_
#define SIEVE_QUERY_WINDOW_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <limits>

namespace sieve {

// The widest window a search takes (K per query): 4 × kMaxSearchK, room for rows tied at the
// edge of the deepest page or the largest limit. Past it a search returns ResourceExhausted.
inline constexpr uint64_t kMaxSearchWindow = 4000000;

// A range search's first window: limit + 1 (enough to tell that the limit is reached) but at
// most kFirstRangeWindow, so that a small radius costs one ordinary top-k; then each window is
// kRangeGrowth times the last. Each round is a full scan, so fewer, wider rounds win: a range
// search whose answer has n rows takes about 1 + log8(n / 256) rounds
// (tools/bench/results/2026-12-05-range-pages/).
inline constexpr uint64_t kFirstRangeWindow = 256;
inline constexpr uint64_t kRangeGrowth = 8;
uint64_t FirstRangeWindow(uint64_t limit);
// After a round that did not hold the rows: kRangeGrowth × window up to limit + 1, then twice
// the window (rows tied at the edge); 0 when that passes kMaxSearchWindow.
uint64_t NextRangeWindow(uint64_t window, uint64_t limit);

// A page's window: the rows before it (the offset, or the cursor's position) plus k; after a
// round that did not hold them (rows tied at the edge, or rows written before the cursor's
// position), twice the window; 0 when that passes kMaxSearchWindow.
uint64_t FirstPageWindow(uint64_t rows_before, uint64_t k);
uint64_t NextPageWindow(uint64_t window);

// The bound of one shard's list for one query (see above): `sorted_keys` ascending, `n` of
// them; `asked` candidates were asked for, `window` of them the window; `passing` rows of the
// shard pass the query's filter. +inf when asked >= passing (the list holds them all).
float ShardCoverBound(const double* sorted_keys, size_t n, uint64_t asked, uint64_t window,
                      uint64_t passing);

// Whether a row of the merged list is proven in place: its key rounds below the bound.
inline bool Covered(double key, float bound) { return static_cast<float>(key) < bound; }

enum class WindowVerdict : uint8_t {
  kDone = 0,          // the rows are proven
  kLimitReached = 1,  // range: limit rows proven, and at least one more within the radius
  kWiden = 2,         // search again with a wider window
};

struct WindowOutcome {
  WindowVerdict verdict = WindowVerdict::kWiden;
  size_t begin = 0, end = 0;  // the rows of the merged list to return
};

// Range search over a merged list of `n` keys (ascending) with the query's bound: the rows with
// key <= radius_key (the radius, negated for ip), at most `limit`.
WindowOutcome DecideRange(const double* keys, size_t n, double radius_key, uint64_t limit,
                          float bound);

// A page over a merged list of `n` keys (ascending) with the query's bound: the k rows from
// index `start` (the offset, or the first row after the cursor).
WindowOutcome DecidePage(const double* keys, size_t n, size_t start, uint64_t k, float bound);

}  // namespace sieve

#endif  // SIEVE_QUERY_WINDOW_PLAN_H_
