// Copyright 2026 The Sieve Authors.
//
// The planner: picks the SDDMM, gather or dense path for one shard's share of a batch from the
// absolute number of passing rows, the shard's rows and dim (and, for per-query filters, the
// largest per-query count and the union), against thresholds calibrated for the device that
// will run it.

#ifndef SIEVE_QUERY_PLANNER_H_
#define SIEVE_QUERY_PLANNER_H_

#include <cstdint>
#include <string>

#include "sieve/db.h"

namespace sieve {

// The rule (PlannerThresholds is declared in include/sieve/db.h). With n_pass the passing rows
// of a bitset filter, sel = n_pass / rows:
//   SDDMM   when n_pass < sddmm_max_rows * (128 / dim)^sddmm_dim_exponent and
//           sel < sddmm_max_fraction (exponent 0: one count at every dim; 1: a budget on
//           n_pass * dim; the SDDMM -> gather crossover falls as dim grows);
//   gather  when amortized = 1 - gather_min_rows / rows > 0, n_pass > k and
//           sel < amortized * min(gather_scale / sqrt(dim), cap), cap = gather_max_fraction,
//           and past 10^6 rows gather_max_fraction * (10^6 / rows)^e, e = gather_rows_exponent
//           * (128 / dim)^gather_rows_dim_exponent (on large shards the dense scan's cost per
//           row falls below the gather's, the more so at small dims);
//   dense   otherwise.
// A bitmap (one filter per query; most = the largest per-query n_pass, union = the size of the
// union of the queries' sets): the alternative to per-query SDDMM is the gather over the union
// when bitmap_union_gather and union / rows < BitmapGatherMaxFraction (query/planner.h:
// bitmap_gather_max_fraction, and with bitmap_gather_scale > 0 at most bitmap_gather_scale ·
// (dim / 128)^bitmap_gather_dim_exponent · (10^6 / rows)^bitmap_gather_rows_exponent), else
// dense; then
//   SDDMM   when most < bitmap_sddmm_max_rows and, against that alternative,
//             union gather: most < bitmap_sddmm_max_share * union (per-query SDDMM reads each
//               query's rows, padded to the largest; the gather reads the union: independent
//               filters, whose union is ~queries times larger, favour SDDMM, shared ones the
//               gather);
//             dense: most < bitmap_sddmm_base_rows + BitmapSddmmMaxFraction(rows, dim) * rows,
//               the fraction bitmap_sddmm_max_fraction * (10^6 / rows)^
//               bitmap_sddmm_rows_exponent * (128 / dim)^bitmap_sddmm_dim_exponent;
//   else the alternative.
// A fraction or share bound of 1 means no bound. With GpuDefaults() this is cuVS 26.10's rule
// except for the SDDMM count's dependence on dim (query/planner.h Cuvs2610Thresholds() has
// cuVS's exactly). Fields added after the first stored format (sddmm_dim_exponent,
// gather_rows_exponent, gather_rows_dim_exponent, bitmap_sddmm_base_rows, bitmap_sddmm_max_share,
// bitmap_sddmm_rows_exponent, bitmap_sddmm_dim_exponent) read as their defaults below when
// missing.

// The dim at which PlannerThresholds::sddmm_max_rows and bitmap_gather_scale apply as they are,
// and the rows at which bitmap_gather_scale does.
inline constexpr double kReferenceDim = 128;
inline constexpr double kReferenceRows = 1e6;

struct PlanInput {
  uint64_t rows = 0;  // rows in the shard's snapshot (deleted included: they are still scanned)
  uint32_t dim = 0;
  uint32_t num_queries = 0;
  uint32_t k = 0;
  bool per_query = false;
  uint64_t passing_rows = 0;  // bitset: the set's count; bitmap: the mean per-query count
  uint64_t union_rows = 0;    // bitmap: the size of the union of the per-query sets
  // bitmap: the largest per-query count (per-query SDDMM pads every query's list to it);
  // 0 = unknown, taken as passing_rows.
  uint64_t max_passing_rows = 0;
};

// Returns kSddmm, kGather or kDense; never kAuto. A filter per query whose sets are all the
// same set (the mean per-query count equals the union's) is planned as that one set, by the
// bitset rule: the executors search such a batch as one filter.
SearchPath ChoosePath(const PlannerThresholds& t, const PlanInput& in);

// How many candidates a shard's executor returns for a top-k of k: k plus a margin (at least 8,
// at most 64), so that float32 rounding near the k-th place cannot push a true neighbour out
// before the float64 refinement re-ranks them.
uint32_t CandidateCount(uint32_t k);

// What the planner decides for one shard's share of a batch.
struct ShardDecision {
  SearchPath path = SearchPath::kDense;  // never kAuto
  // Candidates the executor returns per query: CandidateCount(k), at most the largest
  // passing count of the batch's filters on this shard (no more rows can pass).
  uint32_t candidates = 0;
};

// The decision for one shard: `forced` (SearchOptions::path) unless it is kAuto, else
// ChoosePath(t, in); `max_passing_rows` is the largest passing count of any of the batch's
// filters on the shard.
ShardDecision PlanShard(const PlannerThresholds& t, const PlanInput& in, SearchPath forced,
                        uint64_t max_passing_rows);

// How a batch's filters reach the executors: "none" (one filter that every row passes),
// "bitset" (one filter for the batch) or "bitmap" (a filter per query: distinct texts).
const char* FilterModeName(size_t distinct_filters, bool matches_all);

// Whether a filter per query has the same set for every query (see ChoosePath).
bool SameSetForEveryQuery(const PlanInput& in);

// The bitset SDDMM count bound at this dim: sddmm_max_rows * (128 / dim)^sddmm_dim_exponent
// (infinite when sddmm_max_rows is UINT64_MAX).
double SddmmMaxRows(const PlannerThresholds& t, uint32_t dim);

// The bitset gather bound of cuVS 26.10's form: (1 - gather_min_rows / rows) *
// min(gather_scale / sqrt(dim), cap), the cap gather_max_fraction scaled by
// (10^6 / rows)^(gather_rows_exponent * (128 / dim)^gather_rows_dim_exponent) past 10^6 rows;
// gather needs sel < this (so <= 0 means never).
double GatherMaxSelectivity(const PlannerThresholds& t, uint64_t rows, uint32_t dim);

// The bitmap per-query SDDMM fraction against dense: bitmap_sddmm_max_fraction ·
// (10^6 / rows)^bitmap_sddmm_rows_exponent · (128 / dim)^bitmap_sddmm_dim_exponent.
double BitmapSddmmMaxFraction(const PlannerThresholds& t, uint64_t rows, uint32_t dim);

// The bitmap union gather bound: union / rows must stay below it. bitmap_gather_max_fraction,
// and with bitmap_gather_scale > 0 also at most bitmap_gather_scale · (dim / 128)^
// bitmap_gather_dim_exponent · (10^6 / rows)^bitmap_gather_rows_exponent (0 without
// bitmap_union_gather).
double BitmapGatherMaxFraction(const PlannerThresholds& t, uint64_t rows, uint32_t dim);

// The thresholds in one line, as the rule reads them: "sddmm_max_rows N at dim 128 x
// (128/dim)^E, gather min_rows ..., bitmap sddmm: ..., union gather ...".
std::string DescribeThresholds(const PlannerThresholds& t);

// Whether PlannerThresholds::DefaultsFor(executor_name) holds thresholds the project measured
// on that device (a GPU it has calibrated) rather than a backend's generic defaults.
bool HasShippedThresholds(const std::string& executor_name);

// cuVS 26.10's rule exactly (kSddmmMaxPassingRows 2000 at every dim, ...): GpuDefaults()
// without the dim scaling of the SDDMM bound. For benchmarks that compare rules.
PlannerThresholds Cuvs2610Thresholds();

// The old cuVS rule (before 26.10, `sparsity < 0.9` → dense): SDDMM while at most 10% of the
// (query, row) pairs pass, else dense. For benchmarks that compare rules.
SearchPath ChooseOldCuvsPath(const PlanInput& in);

}  // namespace sieve

#endif  // SIEVE_QUERY_PLANNER_H_
